-- role: owner
-- The live hints of an UPDATE of a table with a row mark function come from its
-- update trigger, row by row (ferry.sync_row_hints_source; issue 47 item 4, stop
-- 22: no UPDATE statement trigger there), except for the row Ferry's one-row
-- UPDATE marks in its SET list (ferry.made = the table's oid and the row's id,
-- FastUpdateSQL): Ferry makes that row's hints itself from its stamp, writer and
-- scope keys (checked here and in HintsAfterCommitTests). The mark names that row
-- only. A Ferry of the previous release (the mark function in its RETURNING) or
-- the one before (the hints function) still gets its hints.

\ir _live_hints.sql

DO $$
DECLARE
    u uuid := pg_temp.collect_as_new_user('hinted-');
    sets text := 'app.study_sets'::regclass::oid::text;
    terms text := 'app.terms'::regclass::oid::text;
    hints text := 'ferry.sync_hints_' || 'app.terms'::regclass::oid;
    mark text := 'ferry.sync_mark_' || 'app.terms'::regclass::oid;
    stamp text;
    writer uuid;
    scope uuid;
    s1 uuid;
    s2 uuid;
    t1 uuid;
    t2 uuid;
    by_trigger text[];
    ok boolean;
BEGIN
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'one') RETURNING id INTO s1;
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'two') RETURNING id INTO s2;
    INSERT INTO app.terms (set_id, word) VALUES (s1, 'w') RETURNING id INTO t1;
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'app.terms'::regclass AND tgname = 'zz_ferry_notify_update'),
                          'terms has no UPDATE statement trigger');

    -- What the update trigger collects for a one-row UPDATE.
    PERFORM set_config('ferry.hints', '', true);
    UPDATE app.terms SET word = 'by the trigger' WHERE id = t1;
    by_trigger := pg_temp.hints();
    PERFORM pg_temp.check(by_trigger = ARRAY[terms || ' s ' || sets || ' ' || s1, terms || ' u ' || u],
                          'the trigger''s hints: the scope row''s, then the writer''s: ' || by_trigger::text);

    -- Ferry's UPDATE: its SET list marks the row; nothing is collected, and the row returns
    -- what its hints are made of.
    PERFORM set_config('ferry.hints', '', true);
    UPDATE app.terms t SET word = (SELECT 'in the write' WHERE pg_catalog.set_config('ferry.made', terms || ' ' || t.id, true) IS NOT NULL)
     WHERE id = t1
    RETURNING t._ferry_xid::text, t._ferry_writer, t.set_id INTO stamp, writer, scope;
    PERFORM pg_temp.check(current_setting('ferry.hints') = '', 'a marked row: nothing collected: ' || current_setting('ferry.hints'));
    PERFORM pg_temp.check(current_setting('ferry.made') = terms || ' ' || t1, 'the mark names the row');
    PERFORM pg_temp.check(stamp = current_setting('ferry.stamp') AND writer = u AND scope = s1,
                          'the row returns what its hints are made of: the stamp, the writer, the scope key');
    PERFORM pg_temp.check((SELECT word FROM app.terms WHERE id = t1) = 'in the write', 'the row was written');

    -- Another row of the table, written next in the transaction, is hinted by the trigger; the
    -- marked row written again has the hints Ferry made already (one stamp, one writer, one set).
    INSERT INTO app.terms (set_id, word) VALUES (s2, 'another') RETURNING id INTO t2;
    PERFORM set_config('ferry.hints', '', true);
    UPDATE app.terms SET word = 'plain' WHERE id = t2;
    PERFORM pg_temp.check(pg_temp.hints() = ARRAY[terms || ' s ' || sets || ' ' || s2, terms || ' u ' || u],
                          'the mark names its row only: ' || pg_temp.hints()::text);
    PERFORM set_config('ferry.hints', '', true);
    UPDATE app.terms SET word = 'again' WHERE id = t1;
    PERFORM pg_temp.check(current_setting('ferry.hints') = '', 'the marked row again: Ferry''s hints');
    PERFORM set_config('ferry.made', '', true);
    UPDATE app.terms SET word = 'unmarked' WHERE id = t1;
    PERFORM pg_temp.check(pg_temp.hints() = by_trigger, 'unmarked, the row is the trigger''s again: ' || pg_temp.hints()::text);

    -- A marked statement that matches no row never evaluates its SET list: no mark left behind.
    UPDATE app.terms t SET word = (SELECT 'nobody''s' WHERE pg_catalog.set_config('ferry.made', terms || ' ' || t.id, true) IS NOT NULL)
     WHERE id = gen_random_uuid();
    PERFORM pg_temp.check(current_setting('ferry.made') = '', 'no row, no mark');

    -- Another table's mark with the same id, or a write another trigger makes, is hinted by the trigger.
    PERFORM set_config('ferry.made', sets || ' ' || t1, true), set_config('ferry.hints', '', true);
    UPDATE app.terms SET word = 'other mark' WHERE id = t1;
    PERFORM pg_temp.check(pg_temp.hints() = by_trigger, 'another table''s mark: the trigger hints: ' || pg_temp.hints()::text);
    PERFORM set_config('ferry.made', terms || ' ' || t1, true), set_config('ferry.hints', '', true);
    UPDATE app.study_sets SET is_deleted = true WHERE id = s2;
    PERFORM pg_temp.check(terms || ' s ' || sets || ' ' || s2 = ANY (pg_temp.hints()),
                          'a term tombstoned with its set (by a trigger) is hinted by the trigger: ' || pg_temp.hints()::text);
    PERFORM set_config('ferry.made', '', true);
    UPDATE app.study_sets SET is_deleted = false WHERE id = s2;

    -- A move (the owner may change a term's set): the old scope row and the new one.
    PERFORM set_config('ferry.hints', '', true);
    UPDATE app.terms SET set_id = s2 WHERE id = t1;
    PERFORM pg_temp.check(pg_temp.hints() = ARRAY[terms || ' s ' || sets || ' ' || s2, terms || ' s ' || sets || ' ' || s1, terms || ' u ' || u],
                          'a move: the new scope row, the old one, the writer: ' || pg_temp.hints()::text);
    UPDATE app.terms SET set_id = s1 WHERE id = t1;

    -- No user: one hint for everyone, as the statement trigger's.
    PERFORM set_config('ferry.user_id', '', true), set_config('ferry.hints', '', true);
    UPDATE app.terms SET word = 'nobody' WHERE id = t1;
    PERFORM pg_temp.check(pg_temp.hints() = ARRAY[terms || ' s ' || sets || ' ' || s1, terms || ' *'],
                          'no user: everyone: ' || pg_temp.hints()::text);
    PERFORM set_config('ferry.user_id', u::text, true);

    -- Outside collect mode the trigger notifies (Tests/SQL/28 and HintsAfterCommitTests see it arrive).
    PERFORM set_config('ferry.hint_mode', '', true), set_config('ferry.hints', '', true);
    UPDATE app.terms SET word = 'loud' WHERE id = t1;
    PERFORM pg_temp.check(current_setting('ferry.hints') = '', 'outside collect mode nothing is collected');
    PERFORM set_config('ferry.hint_mode', 'collect', true);

    -- The previous release's Ferry calls the mark function in its RETURNING and makes the
    -- row's hints itself; it sets no mark, so the trigger collects them too (the same lines).
    PERFORM set_config('ferry.hints', '', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'previous release', t1, mark) INTO ok;
    PERFORM pg_temp.check(ok, 'the mark function still answers true in collect mode');
    PERFORM pg_temp.check(pg_temp.hints() = by_trigger, 'and the trigger collected: ' || pg_temp.hints()::text);
    -- The one before called the hints function, which collects the same lines once.
    PERFORM set_config('ferry.hints', '', true);
    EXECUTE format('UPDATE app.terms t SET word = %L WHERE id = %L RETURNING %s(t)', 'release before', t1, hints) INTO ok;
    PERFORM pg_temp.check(pg_temp.hints() = by_trigger, 'the hints function''s and the trigger''s, each once: ' || pg_temp.hints()::text);

    -- A private members table names its rows' owners, which its statement trigger looks up:
    -- no hints or mark function, both notify statement triggers, no hints in its update trigger.
    PERFORM pg_temp.check(to_regproc('ferry.sync_hints_' || 'app.class_members'::regclass::oid) IS NULL,
                          'class_members has no hints function');
    PERFORM pg_temp.check(to_regproc('ferry.sync_mark_' || 'app.class_members'::regclass::oid) IS NULL,
                          'class_members has no mark function');
    PERFORM pg_temp.check(to_regproc(hints) IS NOT NULL AND to_regproc(mark) IS NOT NULL, 'terms has both');
    PERFORM pg_temp.check(EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = 'app.class_members'::regclass AND tgname = 'zz_ferry_notify_update'),
                          'class_members keeps its UPDATE statement trigger');
    PERFORM pg_temp.check((SELECT p.prosrc NOT LIKE '%ferry.made%' FROM pg_proc p
                            WHERE p.proname = 'sync_update_' || 'app.class_members'::regclass::oid),
                          'class_members'' update trigger makes no hints');
END $$;

SELECT 'PASS 26_hints_in_the_write';
