-- role: owner
-- Migration 0030: ferry.access_changed_users names the users with an access
-- grant or revocation at or after an xid, or NULL for as many entries as
-- the limit or more, by the logs' xid indexes; the serve role may call it.

DO $$
DECLARE a uuid; b uuid; c uuid; before xid8; got uuid[];
BEGIN
    a := ferry.create_user('acu-a', 'acu-password-1');
    b := ferry.create_user('acu-b', 'acu-password-1');
    c := ferry.create_user('acu-c', 'acu-password-1');
    INSERT INTO ferry.access_grants (user_id, xid, scope_table, scope_id) VALUES (a, '5'::xid8, 'ferry.users', 'x');
    before := pg_current_xact_id();
    INSERT INTO ferry.access_grants (user_id, scope_table, scope_id) VALUES (b, 'ferry.users', 'y');
    INSERT INTO ferry.access_revocations (user_id, table_oid, row_id) VALUES (c, 'ferry.users', 'z');
    got := ferry.access_changed_users(before, 10);
    PERFORM pg_temp.check(got @> ARRAY[b, c] AND NOT got @> ARRAY[a], 'grants and revocations at or after the xid, not before');
    PERFORM pg_temp.check(ferry.access_changed_users(before, 2) IS NULL, 'as many entries as the limit: too many to tell');
    PERFORM pg_temp.check(cardinality(ferry.access_changed_users(before, 3)) = 2, 'fewer: each user once');
    PERFORM pg_temp.check(cardinality(ferry.access_changed_users((before::text::numeric + 1000000)::text::xid8, 10)) = 0, 'none after: an empty array, not null');
    PERFORM pg_temp.check(has_function_privilege('ferry_app', 'ferry.access_changed_users(xid8, integer)', 'EXECUTE'), 'the serve role calls it');
END $$;

SELECT pg_temp.check(
    (SELECT count(*) FROM pg_indexes WHERE schemaname = 'ferry' AND indexname IN ('access_grants_xid_idx', 'access_revocations_xid_idx')) = 2,
    'both logs have their xid index');

SELECT 'PASS 17_access_changed_users';
