-- role: owner
-- Migration 0022: a member table of an access scope gets the reach check (two
-- statement triggers and a generated function), a scope table and a table in
-- no scope get none, and the check comes and goes with the table's scopes.
-- What it refuses, and why, is tested over the wire by ChangesAccessTests.

DO $$
DECLARE
    v_terms regclass := 'app.terms';
    v_function text := format('ferry.sync_reach_%s()', 'app.terms'::regclass::oid);
BEGIN
    PERFORM pg_temp.check(
        (SELECT array_agg(t.tgname::text ORDER BY t.tgname) FROM pg_trigger t
          WHERE t.tgrelid = v_terms AND t.tgname LIKE 'zz_ferry_reach_%') = ARRAY['zz_ferry_reach_insert', 'zz_ferry_reach_update']
        AND (SELECT bool_and(t.tgfoid = v_function::regprocedure) FROM pg_trigger t
              WHERE t.tgrelid = v_terms AND t.tgname LIKE 'zz_ferry_reach_%'),
        'terms, a member of the study_sets scope, is checked by its own generated function');
    PERFORM pg_temp.check(
        NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid IN ('app.study_sets'::regclass, 'app.folders'::regclass)
                     AND t.tgname LIKE 'zz_ferry_reach_%'),
        'the scope table and a table in no scope have no reach check');
    PERFORM pg_temp.check(NOT has_function_privilege('ferry_app', v_function, 'EXECUTE')
                          AND NOT has_function_privilege('ferry_app', 'ferry.refresh_sync_reach(regclass)', 'EXECUTE'),
                          'the app role can neither call the check nor regenerate it');
    PERFORM pg_temp.check(position('o.set_id IS DISTINCT FROM n.set_id' IN
                                   (SELECT p.prosrc FROM pg_proc p WHERE p.oid = v_function::regprocedure)) > 0,
                          'an update is checked for the rows whose scope column changed');

    -- Out of every scope: the check and its function go; back in, they return.
    CREATE TEMP TABLE saved_scopes AS SELECT * FROM ferry.access_scopes WHERE member_table = v_terms;
    DELETE FROM ferry.access_scopes WHERE member_table = v_terms;
    PERFORM ferry.refresh_sync_trigger(v_terms);
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = v_terms AND t.tgname LIKE 'zz_ferry_reach_%')
                          AND to_regprocedure(v_function) IS NULL,
                          'a table that leaves its scopes loses the check and its function');
    INSERT INTO ferry.access_scopes SELECT * FROM saved_scopes;
    PERFORM ferry.refresh_sync_trigger(v_terms);
    PERFORM pg_temp.check((SELECT count(*) FROM pg_trigger t WHERE t.tgrelid = v_terms AND t.tgname LIKE 'zz_ferry_reach_%') = 2,
                          'declared a member again, it is checked again');
END $$;

SELECT 'PASS 14_reach_check';
