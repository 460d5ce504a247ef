-- role: owner
-- Ferry's one-row UPDATE collected its hints in its RETURNING clause (the
-- table's ferry.sync_hints_<oid>, issue 47 item 4; the previous release's way,
-- still generated for it; now it calls ferry.sync_mark_<oid> and makes them
-- itself, checked below and in HintsAfterCommitTests), and the notify trigger's
-- function then returns at its first statement: the same hints as the
-- trigger's, inlined into the plan, for that statement only. Any other write (no RETURNING call,
-- outside collect mode, after other hints) still goes through the trigger.

\ir _live_hints.sql

DO $$
DECLARE
    u uuid := pg_temp.collect_as_new_user('hinted-');
    sets text := 'app.study_sets'::regclass::oid::text;
    terms text := 'app.terms'::regclass::oid::text;
    notify text := 'ferry.sync_notify_' || 'app.terms'::regclass::oid;
    hints text := 'ferry.sync_hints_' || 'app.terms'::regclass::oid;
    mark text := 'ferry.sync_mark_' || 'app.terms'::regclass::oid;
    stamp text;
    writer uuid;
    scope uuid;
    real_body text;
    s1 uuid;
    t1 uuid;
    by_trigger text[];
    ok boolean;
    plan text := '';
    line text;
BEGIN
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'one') RETURNING id INTO s1;
    INSERT INTO app.terms (set_id, word) VALUES (s1, 'w') RETURNING id INTO t1;

    -- What the trigger collects for a one-row UPDATE.
    PERFORM set_config('ferry.hints', '', true);
    UPDATE app.terms SET word = 'by the trigger' WHERE id = t1;
    by_trigger := pg_temp.hints();
    PERFORM pg_temp.check(by_trigger = ARRAY[terms || ' s ' || sets || ' ' || s1, terms || ' u ' || u],
                          'the trigger''s hints: ' || by_trigger::text);

    -- The trigger's function, its first statement kept (a statement whose RETURNING
    -- collected returns there), then made to record that it went past it.
    SELECT p.prosrc INTO real_body FROM pg_proc p WHERE p.oid = (notify || '()')::regprocedure;
    PERFORM pg_temp.check(real_body LIKE '%IF (CASE WHEN pg_catalog.current_setting(''ferry.hinted'', true) = ''' || terms || ''' AND pg_catalog.pg_trigger_depth() = 1%',
                          'the notify function returns first for a marked statement');
    EXECUTE format($f$CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN
        IF current_setting(''ferry.hinted'', true) = ''%s'' AND pg_trigger_depth() = 1 THEN
            PERFORM set_config(''ferry.hinted'', '''', true);
            RETURN NULL;
        END IF;
        PERFORM pg_catalog.set_config(''test.entered'', ''yes'', true); RETURN NULL; END'$f$, notify, terms);

    PERFORM set_config('ferry.hints', '', true), set_config('test.entered', 'no', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'in the write', t1, hints) INTO ok;
    PERFORM pg_temp.check(ok, 'the RETURNING call collected');
    PERFORM pg_temp.check(pg_temp.hints() = by_trigger, 'the same hints as the trigger''s: ' || pg_temp.hints()::text);
    PERFORM pg_temp.check(current_setting('test.entered') = 'no', 'the notify function returned at its first statement');
    PERFORM pg_temp.check(current_setting('ferry.hinted') = '', 'the mark served that statement only');

    -- The next UPDATE without the call goes through the trigger.
    UPDATE app.terms SET word = 'plain' WHERE id = t1;
    PERFORM pg_temp.check(current_setting('test.entered') = 'yes', 'a plain UPDATE enters the notify function');

    -- Hints already collected in the transaction (a batch's earlier write): the trigger's way, which keeps each once.
    PERFORM set_config('ferry.hints', E'1 0 u other\n', true), set_config('test.entered', 'no', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'second', t1, hints) INTO ok;
    PERFORM pg_temp.check(NOT ok AND current_setting('test.entered') = 'yes', 'after other hints the trigger collects');

    -- Outside collect mode the trigger notifies, as before.
    PERFORM set_config('ferry.hint_mode', '', true), set_config('ferry.hints', '', true), set_config('test.entered', 'no', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'loud', t1, hints) INTO ok;
    PERFORM pg_temp.check(NOT ok AND current_setting('test.entered') = 'yes' AND current_setting('ferry.hints') = '',
                          'outside collect mode the trigger runs');
    PERFORM set_config('ferry.hint_mode', 'collect', true);

    -- No user: one hint for everyone, as the trigger's.
    PERFORM set_config('ferry.user_id', '', true), set_config('ferry.hints', '', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'nobody', t1, hints) INTO ok;
    PERFORM pg_temp.check(pg_temp.hints() = ARRAY[terms || ' s ' || sets || ' ' || s1, terms || ' *'],
                          'no user: everyone: ' || pg_temp.hints()::text);
    PERFORM set_config('ferry.user_id', u::text, true);

    -- Inlined: the plan holds the expression, no call of the function.
    FOR line IN EXECUTE format('EXPLAIN (VERBOSE, COSTS OFF) UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)',
                               'x', t1, hints) LOOP
        plan := plan || line || E'\n';
    END LOOP;
    PERFORM pg_temp.check(plan NOT LIKE '%sync_hints_%' AND plan LIKE '%set_config%', 'inlined into the plan: ' || plan);

    -- The row mark function (issue 47 item 4, its second step): Ferry's UPDATE calls it
    -- and makes the row's hints itself from its stamp, writer and scope keys. In collect
    -- mode it marks the statement (the notify function returns at its first statement)
    -- and answers true; it collects nothing.
    PERFORM set_config('ferry.hints', '', true), set_config('test.entered', 'no', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t), t._ferry_xid::text, t._ferry_writer, t.set_id',
                   'marked', t1, mark) INTO ok, stamp, writer, scope;
    PERFORM pg_temp.check(ok, 'the mark function answers true in collect mode');
    PERFORM pg_temp.check(current_setting('test.entered') = 'no', 'a marked statement: the notify function returned at its first statement');
    PERFORM pg_temp.check(current_setting('ferry.hinted') = '', 'the mark served that statement only');
    PERFORM pg_temp.check(current_setting('ferry.hints') = '', 'the mark function collects nothing');
    PERFORM pg_temp.check(stamp = current_setting('ferry.stamp') AND writer = u AND scope = s1,
                          'the row returns what its hints are made of: the stamp, the writer, the scope key');
    -- After other hints too (a batch's later write): Ferry adds the row's to them.
    PERFORM set_config('ferry.hints', E'1 0 u other\n', true), set_config('test.entered', 'no', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'marked again', t1, mark) INTO ok;
    PERFORM pg_temp.check(ok AND current_setting('test.entered') = 'no' AND current_setting('ferry.hints') = E'1 0 u other\n',
                          'after other hints the statement is marked and they are kept');
    -- Outside collect mode: NULL, no mark, and the trigger notifies.
    PERFORM set_config('ferry.hint_mode', '', true), set_config('test.entered', 'no', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'loud again', t1, mark) INTO ok;
    PERFORM pg_temp.check(ok IS NULL AND current_setting('test.entered') = 'yes', 'outside collect mode the trigger runs');
    PERFORM set_config('ferry.hint_mode', 'collect', true);
    plan := '';
    FOR line IN EXECUTE format('EXPLAIN (VERBOSE, COSTS OFF) UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)',
                               'x', t1, mark) LOOP
        plan := plan || line || E'\n';
    END LOOP;
    PERFORM pg_temp.check(plan NOT LIKE '%sync_mark_%' AND plan LIKE '%set_config%', 'the mark inlined into the plan: ' || plan);

    EXECUTE format('CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS %L', notify, real_body);

    -- A private members table names its rows' owners, which the trigger looks up: no hints function.
    PERFORM pg_temp.check(to_regproc('ferry.sync_hints_' || 'app.class_members'::regclass::oid) IS NULL,
                          'class_members has no hints function');
    PERFORM pg_temp.check(to_regproc(hints) IS NOT NULL, 'terms has one');
    PERFORM pg_temp.check(to_regproc('ferry.sync_mark_' || 'app.class_members'::regclass::oid) IS NULL,
                          'class_members has no mark function');
    PERFORM pg_temp.check(to_regproc(mark) IS NOT NULL, 'terms has one');
END $$;

SELECT 'PASS 26_hints_in_the_write';
