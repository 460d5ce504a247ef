-- role: owner
-- Migration 0022: a member table of an access scope gets the reach check (two
-- triggers and a generated function), a scope table and a table in no scope
-- get none, and the check comes and goes with the table's scopes. Since issue
-- 47 the UPDATE trigger is a row trigger WHEN a member column changed: an
-- update that moves no row calls no function.
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
    PERFORM pg_temp.check(
        (SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE t.tgrelid = v_terms AND t.tgname = 'zz_ferry_reach_update')
        LIKE '% AFTER UPDATE ON app.terms FOR EACH ROW WHEN ((old.set_id IS DISTINCT FROM new.set_id)) EXECUTE FUNCTION %',
        'an update is checked, row by row, only for a row whose scope column changed');
    PERFORM pg_temp.check(
        (SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE t.tgrelid = v_terms AND t.tgname = 'zz_ferry_reach_insert')
        LIKE '% AFTER INSERT ON app.terms REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %',
        'an insert is checked by a statement trigger, as 0022 made it');

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

-- What the triggers call: the check's function made to raise (in a savepoint,
-- rolled back), an UPDATE of a term that changes no member column calls it
-- for no row; one that moves the term into another set calls it; an insert calls it.
DO $$
DECLARE
    v_function text := format('ferry.sync_reach_%s()', 'app.terms'::regclass::oid);
    v_source text := (SELECT p.prosrc FROM pg_proc p WHERE p.oid = format('ferry.sync_reach_%s()', 'app.terms'::regclass::oid)::regprocedure);
    u uuid := ferry.create_user('reach-' || gen_random_uuid(), 'reach-password-1');
    s1 uuid;
    s2 uuid;
    t1 uuid;
    v_called text;
BEGIN
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'one') RETURNING id INTO s1;
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'two') RETURNING id INTO s2;
    INSERT INTO app.terms (set_id, word) VALUES (s1, 'w') RETURNING id INTO t1;
    BEGIN
        EXECUTE format('CREATE OR REPLACE FUNCTION %s RETURNS trigger LANGUAGE plpgsql AS %L', v_function,
                       'BEGIN RAISE EXCEPTION USING ERRCODE = ''P0004'', MESSAGE = TG_LEVEL || '' '' || TG_OP; END');
        UPDATE app.terms SET word = 'patched', definition = 'd', is_deleted = false WHERE id = t1;
        UPDATE app.terms SET set_id = s1 WHERE id = t1;
        BEGIN
            UPDATE app.terms SET set_id = s2 WHERE id = t1;
        EXCEPTION WHEN assert_failure THEN
            v_called := SQLERRM;
        END;
        PERFORM pg_temp.check(v_called = 'ROW UPDATE', 'a move into another set calls the check for its row: ' || coalesce(v_called, 'not called'));
        v_called := NULL;
        BEGIN
            INSERT INTO app.terms (set_id, word) VALUES (s1, 'new');
        EXCEPTION WHEN assert_failure THEN
            v_called := SQLERRM;
        END;
        PERFORM pg_temp.check(v_called = 'STATEMENT INSERT', 'an insert calls the check once: ' || coalesce(v_called, 'not called'));
        RAISE EXCEPTION USING ERRCODE = 'P0003';
    EXCEPTION WHEN too_many_rows THEN
        NULL;
    END;
    PERFORM pg_temp.check((SELECT p.prosrc FROM pg_proc p WHERE p.oid = v_function::regprocedure) = v_source,
                          'the check''s own function is back');
END $$;

-- A refresh that changes nothing leaves the triggers alone (no lock taken, same oids);
-- 0022's statement trigger for UPDATE is replaced by the row trigger.
DO $$
DECLARE
    v_terms regclass := 'app.terms';
    v_function text := format('ferry.sync_reach_%s()', 'app.terms'::regclass::oid);
    v_before oid[] := (SELECT array_agg(t.oid ORDER BY t.tgname) FROM pg_trigger t WHERE t.tgrelid = 'app.terms'::regclass AND t.tgname LIKE 'zz_ferry_reach_%');
    v_def text := (SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE t.tgrelid = 'app.terms'::regclass AND t.tgname = 'zz_ferry_reach_update');
BEGIN
    PERFORM ferry.refresh_sync_trigger(v_terms);
    PERFORM pg_temp.check((SELECT array_agg(t.oid ORDER BY t.tgname) FROM pg_trigger t WHERE t.tgrelid = v_terms AND t.tgname LIKE 'zz_ferry_reach_%') = v_before,
                          'a refresh with nothing to change keeps the triggers');
    EXECUTE format('CREATE OR REPLACE TRIGGER zz_ferry_reach_update AFTER UPDATE ON app.terms '
                   'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %s', v_function);
    PERFORM ferry.refresh_sync_trigger(v_terms);
    PERFORM pg_temp.check((SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE t.tgrelid = v_terms AND t.tgname = 'zz_ferry_reach_update') = v_def,
                          'the statement trigger of 0022 becomes the row trigger');
END $$;

SELECT 'PASS 14_reach_check';
