-- role: owner
-- ferry.window_keys: the ids and rule columns of a table's rows changed in a
-- window of xids, read past Row Level Security (the default stream's
-- fan-out, docs/changes-feed.md); after its lower xid (a frontier cursor's,
-- whose entries are delivered), not at it; NULL past its limit; only rule
-- columns; only synced tables with a rule; the serve role may call it.

DO $$
DECLARE
    u uuid := ferry.create_user('wk-' || gen_random_uuid(), 'wk-password-1');
    v uuid := ferry.create_user('wk-' || gen_random_uuid(), 'wk-password-1');
    before xid8;
    stamp xid8;
    below xid8;
    s1 uuid;
    s2 uuid;
    got json;
BEGIN
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'old') RETURNING id, _ferry_xid INTO s1, stamp;
    -- This transaction's rows carry its stamp (at or above its xid): a window from just below it holds them.
    below := (stamp::text::numeric - 1)::text::xid8;
    -- A window opens after this transaction's xid: only what a later one writes.
    before := (pg_current_xact_id()::text::numeric + 1)::text::xid8;
    PERFORM pg_temp.check(ferry.window_keys('app.terms', ARRAY['set_id']::name[], before, '18446744073709551615'::xid8, 10) = '[]',
                          'nothing changed in the window: an empty array, not null');
    PERFORM pg_temp.check(ferry.window_keys('app.study_sets', ARRAY['creator_id']::name[], below, '18446744073709551615'::xid8, 10)::json->0->>1 = u::text,
                          'a row of the window with its rule column');
    PERFORM pg_temp.check(ferry.window_keys('app.study_sets', ARRAY['creator_id']::name[], below, stamp, 10) = '[]',
                          'the window ends below its upper xid');
    PERFORM pg_temp.check(NOT ferry.window_keys('app.study_sets', ARRAY['creator_id']::name[], stamp, '18446744073709551615'::xid8, 10)::jsonb
                              @> jsonb_build_array(jsonb_build_array(s1::text)),
                          'the window starts after its lower xid: a row at a frontier cursor''s xid is delivered, in no page');
    INSERT INTO app.study_sets (creator_id, title) VALUES (v, 'v''s') RETURNING id INTO s2;
    INSERT INTO app.terms (set_id, word) SELECT s2, 'w' || i FROM generate_series(1, 3) i;
    got := ferry.window_keys('app.terms', ARRAY['set_id']::name[], below, '18446744073709551615'::xid8, 3)::json;
    PERFORM pg_temp.check(json_array_length(got) = 3 AND got->0->>1 = s2::text AND json_array_length(got->0) = 2,
                          'each row: its id and its parent column, as text: ' || got::text);
    PERFORM pg_temp.check(ferry.window_keys('app.terms', ARRAY['set_id']::name[], below, '18446744073709551615'::xid8, 2) IS NULL,
                          'more rows than the limit: too many to tell');
    got := ferry.window_keys('app.set_collaborators', ARRAY['user_id', 'set_id']::name[], below, '18446744073709551615'::xid8, 5)::json;
    PERFORM pg_temp.check(json_array_length(got) = 0, 'a members table: its member and scope columns');
    BEGIN
        PERFORM ferry.window_keys('app.terms', ARRAY['word']::name[], below, '18446744073709551615'::xid8, 5);
        PERFORM pg_temp.check(false, 'a column no rule names is refused');
    EXCEPTION WHEN insufficient_privilege THEN
        NULL;
    END;
    BEGIN
        PERFORM ferry.window_keys('ferry.users', ARRAY[]::name[], below, '18446744073709551615'::xid8, 5);
        PERFORM pg_temp.check(false, 'a table without a sync rule is refused');
    EXCEPTION WHEN insufficient_privilege THEN
        NULL;
    END;
    PERFORM pg_temp.check(has_function_privilege('ferry_app', 'ferry.window_keys(regclass, name[], xid8, xid8, integer)', 'EXECUTE'),
                          'the serve role calls it');
    PERFORM pg_temp.check(NOT has_function_privilege('public', 'ferry.window_keys(regclass, name[], xid8, xid8, integer)', 'EXECUTE'),
                          'nobody else does');
END $$;

-- Past Row Level Security: it runs as its owner, the tables' owner, whom their policies do not bind.
SELECT pg_temp.check((SELECT p.prosecdef FROM pg_proc p WHERE p.oid = 'ferry.window_keys(regclass, name[], xid8, xid8, integer)'::regprocedure),
                     'SECURITY DEFINER');
SELECT pg_temp.check((SELECT c.relrowsecurity AND NOT c.relforcerowsecurity FROM pg_class c WHERE c.oid = 'app.terms'::regclass),
                     'the tables'' policies bind the serve role, not their owner');

SELECT 'PASS 25_window_keys';
