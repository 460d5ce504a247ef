-- role: owner
-- Migration 0030: ferry.access_changed_users names the users with an access
-- grant or revocation after an xid (a frontier cursor's: not at it, stop 63),
-- or NULL for as many entries as the limit or more, by the logs' xid indexes;
-- the serve role may call it.

DO $$
DECLARE a uuid; b uuid; c uuid; d uuid; stamp xid8; below xid8; got uuid[];
BEGIN
    a := ferry.create_user('acu-a', 'acu-password-1');
    b := ferry.create_user('acu-b', 'acu-password-1');
    c := ferry.create_user('acu-c', 'acu-password-1');
    d := ferry.create_user('acu-d', 'acu-password-1');
    INSERT INTO ferry.access_grants (user_id, xid, scope_table, scope_id) VALUES (a, '5'::xid8, 'ferry.users', 'x');
    -- Both entries carry this transaction's stamp.
    INSERT INTO ferry.access_grants (user_id, scope_table, scope_id) VALUES (b, 'ferry.users', 'y') RETURNING xid INTO stamp;
    INSERT INTO ferry.access_revocations (user_id, table_oid, row_id) VALUES (c, 'ferry.users', 'z');
    below := (stamp::text::numeric - 1)::text::xid8;
    got := ferry.access_changed_users(below, 10);
    PERFORM pg_temp.check(got @> ARRAY[b, c] AND NOT got @> ARRAY[a], 'grants and revocations after the xid, not before');
    PERFORM pg_temp.check(ferry.access_changed_users(below, 2) IS NULL, 'as many entries as the limit: too many to tell');
    PERFORM pg_temp.check(cardinality(ferry.access_changed_users(below, 3)) = 2, 'fewer: each user once');
    got := ferry.access_changed_users(stamp, 10);
    PERFORM pg_temp.check(got = '{}',
                          'none after the stamp: an empty array, not null; entries at a frontier cursor''s xid are its holder''s already: '
                          || coalesce(got::text, 'null'));
    INSERT INTO ferry.access_grants (user_id, xid, scope_table, scope_id)
         VALUES (d, (stamp::text::numeric + 1)::text::xid8, 'ferry.users', 'w');
    PERFORM pg_temp.check(ferry.access_changed_users(stamp, 10) = ARRAY[d], 'the next xid is after it');
    PERFORM pg_temp.check(has_function_privilege('ferry_app', 'ferry.access_changed_users(xid8, integer)', 'EXECUTE'), 'the serve role calls it');
END $$;

SELECT pg_temp.check(
    (SELECT count(*) FROM pg_indexes WHERE schemaname = 'ferry' AND indexname IN ('access_grants_xid_idx', 'access_revocations_xid_idx')) = 2,
    'both logs have their xid index');

SELECT 'PASS 17_access_changed_users';
