-- role: owner
-- The live hints a write collects in Ferry's collect mode (0028, made cheaper
-- by 0034): each once per transaction, in the order the triggers make them,
-- dropped with a rolled-back savepoint, '*' for more than 100 scope rows of an
-- INSERT (an UPDATE's rows are hinted one by one by the update trigger: each
-- named), and notified instead of collected past 64 kB; outside collect mode,
-- none collected.

\ir _live_hints.sql

DO $$
DECLARE
    u uuid := pg_temp.collect_as_new_user('hints-');
    sets text := 'app.study_sets'::regclass::oid::text;
    terms text := 'app.terms'::regclass::oid::text;
    s1 uuid;
    s2 uuid;
    many text[];
BEGIN
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'one') RETURNING id INTO s1;
    PERFORM pg_temp.check(pg_temp.hints() = ARRAY[sets || ' s ' || sets || ' ' || s1, sets || ' u ' || u],
                          'an insert collects its scope row''s hint, then its user''s: ' || pg_temp.hints()::text);
    UPDATE app.study_sets SET title = 'one again' WHERE id = s1;
    INSERT INTO app.terms (set_id, word) SELECT s1, 'w' || i FROM generate_series(1, 3) i;
    UPDATE app.terms SET word = 'x' WHERE set_id = s1;
    PERFORM pg_temp.check(pg_temp.hints() = ARRAY[sets || ' s ' || sets || ' ' || s1, sets || ' u ' || u,
                                                  terms || ' s ' || sets || ' ' || s1, terms || ' u ' || u],
                          'each hint once per transaction, however many statements and rows: ' || pg_temp.hints()::text);
    PERFORM pg_temp.check(current_setting('ferry.hints') LIKE '%' || E'\n' AND current_setting('ferry.hints') NOT LIKE E'%\n\n%',
                          'one hint a line, each ended by a newline');
    BEGIN
        INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'gone') RETURNING id INTO s2;
        PERFORM pg_temp.check(cardinality(pg_temp.hints()) = 5, 'the savepoint''s own hint, while it lasts');
        RAISE EXCEPTION USING ERRCODE = 'P0004';
    EXCEPTION WHEN assert_failure THEN
        NULL;
    END;
    PERFORM pg_temp.check(cardinality(pg_temp.hints()) = 4 AND NOT pg_temp.hints()::text LIKE '%' || s2 || '%',
                          'a rolled-back savepoint takes its hints along: ' || pg_temp.hints()::text);

    -- More than 100 scope rows in one statement: one hint for everyone instead.
    PERFORM set_config('ferry.hints', '', true);
    INSERT INTO app.study_sets (creator_id, title) SELECT u, 'many ' || i FROM generate_series(1, 101) i;
    PERFORM pg_temp.check(pg_temp.hints() = ARRAY[sets || ' *'], '101 scope rows: everyone: ' || pg_temp.hints()::text);
    PERFORM set_config('ferry.hints', '', true);
    UPDATE app.study_sets SET title = 'some' WHERE id IN (SELECT id FROM app.study_sets WHERE title LIKE 'many %' ORDER BY id LIMIT 100);
    many := pg_temp.hints();
    PERFORM pg_temp.check(cardinality(many) = 101 AND (SELECT count(*) FROM unnest(many) h WHERE h = sets || ' u ' || u) = 1,
                          '100 scope rows of an UPDATE: a hint each, and the user''s once: ' || cardinality(many));
    PERFORM pg_temp.check((SELECT array_agg(h ORDER BY h) FROM unnest(many) h WHERE h <> sets || ' u ' || u)
                          = (SELECT array_agg(sets || ' s ' || sets || ' ' || id ORDER BY sets || ' s ' || sets || ' ' || id)
                               FROM app.study_sets WHERE title = 'some'),
                          'the scope rows'' hints are the updated rows''');

    -- Past 64 kB collected, a hint is notified instead (at the commit), and the setting no longer grows.
    PERFORM set_config('ferry.hints', repeat('x', 65537) || E'\n', true);
    UPDATE app.study_sets SET title = 'full' WHERE id = s1;
    PERFORM pg_temp.check(current_setting('ferry.hints') = repeat('x', 65537) || E'\n', 'past 64 kB nothing more is collected');
    PERFORM set_config('ferry.hints', repeat('x', 65000) || E'\n', true);
    UPDATE app.study_sets SET title = 'nearly full' WHERE id = s1;
    PERFORM pg_temp.check((pg_temp.hints())[2:3] = ARRAY[sets || ' s ' || sets || ' ' || s1, sets || ' u ' || u],
                          'below 64 kB a statement''s hints are still collected');

    -- ferry.hint(), which other triggers call, keeps each once too.
    PERFORM set_config('ferry.hints', '', true);
    PERFORM ferry.hint('1 0 u a'), ferry.hint('1 0 u b'), ferry.hint('1 0 u a');
    PERFORM pg_temp.check(current_setting('ferry.hints') = E'1 0 u a\n1 0 u b\n', 'ferry.hint collects each once');

    -- Outside collect mode (psql, another service) the triggers notify instead.
    PERFORM set_config('ferry.hint_mode', '', true), set_config('ferry.hints', '', true);
    UPDATE app.study_sets SET title = 'loud' WHERE id = s1;
    PERFORM ferry.hint('1 0 u c');
    PERFORM pg_temp.check(current_setting('ferry.hints') = '', 'nothing collected outside collect mode');
END $$;

-- A class's member rows are private (ferry.rules_private_members): a member row
-- names its student and the class's teacher, never the class for all its readers
-- (issue 46); a shared set's collaborator rows still name their set.
DO $$
DECLARE
    t uuid := pg_temp.collect_as_new_user('hints-t-');
    s1 uuid := ferry.create_user('hints-s1-' || gen_random_uuid(), 'hints-password-1');
    s2 uuid := ferry.create_user('hints-s2-' || gen_random_uuid(), 'hints-password-1');
    admin uuid := ferry.create_user('hints-a-' || gen_random_uuid(), 'hints-password-1');
    members text := 'app.class_members'::regclass::oid::text;
    sets text := 'app.study_sets'::regclass::oid::text;
    k uuid;
    m uuid;
    s uuid;
    mine text[];
BEGIN
    INSERT INTO app.classes (teacher_id, name) VALUES (t, '4B') RETURNING id INTO k;
    INSERT INTO app.study_sets (creator_id, title) VALUES (t, 'shared') RETURNING id INTO s;
    PERFORM set_config('ferry.hints', '', true);
    INSERT INTO app.class_members (class_id, user_id) VALUES (k, s1) RETURNING id INTO m;
    mine := array(SELECT h FROM unnest(pg_temp.hints()) h WHERE h LIKE members || ' %' ORDER BY h);
    PERFORM pg_temp.check(mine = (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY[members || ' u ' || s1, members || ' u ' || t]) x),
                          'a member row names its student and the writer, the teacher: ' || pg_temp.hints()::text);
    PERFORM pg_temp.check('0 u ' || s1 = ANY (pg_temp.hints()), 'and the access log names the student: ' || pg_temp.hints()::text);
    -- Written by someone else (a tool as the owner role, in another user's name): the teacher is named as the class's owner.
    PERFORM set_config('ferry.user_id', admin::text, true), set_config('ferry.hints', '', true);
    UPDATE app.class_members SET user_id = s2 WHERE id = m;
    mine := array(SELECT h FROM unnest(pg_temp.hints()) h WHERE h LIKE members || ' %' ORDER BY h);
    PERFORM pg_temp.check(mine = (SELECT array_agg(x ORDER BY x)
                                    FROM unnest(ARRAY[members || ' u ' || s1, members || ' u ' || s2, members || ' u ' || t,
                                                      members || ' u ' || admin]) x),
                          'a member row moved names both students, the teacher and the writer: ' || pg_temp.hints()::text);
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM unnest(pg_temp.hints()) h WHERE h LIKE '% s %'),
                          'and no scope row: ' || pg_temp.hints()::text);
    PERFORM set_config('ferry.user_id', t::text, true), set_config('ferry.hints', '', true);
    INSERT INTO app.set_collaborators (set_id, user_id) VALUES (s, s1);
    PERFORM pg_temp.check('app.set_collaborators'::regclass::oid::text || ' s ' || sets || ' ' || s = ANY (pg_temp.hints()),
                          'a collaborator row still names its set: ' || pg_temp.hints()::text);
END $$;

SELECT 'PASS 22_live_hints';
