-- Loaded by run.sh before every SQL test file, in the same session.
-- pg_temp.check(ok, what): fails the test with "check failed: what" unless ok.
-- pg_temp.expect_error(sql, sqlstate): fails unless running sql raises sqlstate.

CREATE FUNCTION pg_temp.check(ok boolean, what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF ok IS NOT TRUE THEN RAISE EXCEPTION 'check failed: %', what; END IF;
END $$;

CREATE FUNCTION pg_temp.expect_error(p_sql text, p_state text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE st text;
BEGIN
    BEGIN
        EXECUTE p_sql;
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
        PERFORM pg_temp.check(st = p_state, format('%s: expected %s, got %s (%s)', p_sql, p_state, st, SQLERRM));
        RETURN;
    END;
    RAISE EXCEPTION 'check failed: % succeeded, expected %', p_sql, p_state;
END $$;
