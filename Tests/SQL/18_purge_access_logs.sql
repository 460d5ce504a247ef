-- role: owner
-- ferry.purge_access_log (0004, 0031): forgets entries of the access logs and
-- the public logs older than the age, within one batch budget, oldest logs
-- first, and raises the purge horizon to the highest xid it forgot.

DO $$
DECLARE u uuid; n bigint; left_over bigint;
BEGIN
    u := ferry.create_user('purge-logs', 'purge-password-1');
    DELETE FROM ferry.access_grants; DELETE FROM ferry.access_revocations;
    DELETE FROM ferry.public_grants; DELETE FROM ferry.public_revocations;
    INSERT INTO ferry.access_grants (user_id, xid, scope_table, scope_id, created_at)
        VALUES (u, '101'::xid8, 'ferry.users', 'a', now() - interval '10 days');
    INSERT INTO ferry.access_revocations (user_id, xid, table_oid, row_id, created_at)
        VALUES (u, '102'::xid8, 'ferry.users', 'b', now() - interval '10 days');
    INSERT INTO ferry.public_grants (xid, scope_table, scope_id, created_at)
        VALUES ('103'::xid8, 'ferry.users', 'c', now() - interval '10 days'), ('104'::xid8, 'ferry.users', 'd', now());
    INSERT INTO ferry.public_revocations (xid, scope_table, scope_id, table_oid, row_id, created_at)
        VALUES ('105'::xid8, 'ferry.users', 'e', 'ferry.users', 'e', now() - interval '10 days');
    UPDATE ferry.purge_horizon SET horizon_xid = '0'::xid8;
    n := ferry.purge_access_log(86400000, 3);
    PERFORM pg_temp.check(n = 3, format('one batch of 3, got %s', n));
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.public_grants WHERE scope_id = 'c') = 0, 'an old public grant is forgotten');
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.public_revocations) = 1, 'past the batch: left for the next call');
    n := ferry.purge_access_log(86400000, 3);
    PERFORM pg_temp.check(n = 1, format('the rest, got %s', n));
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.public_revocations) = 0, 'an old public revocation is forgotten');
    PERFORM pg_temp.check((SELECT count(*) FROM ferry.public_grants WHERE scope_id = 'd') = 1, 'a recent one stays');
    PERFORM pg_temp.check((SELECT horizon_xid FROM ferry.purge_horizon) = '105'::xid8, 'the horizon is the highest forgotten xid');
    left_over := ferry.purge_access_log(86400000, 3);
    PERFORM pg_temp.check(left_over = 0, 'nothing more');
END $$;

SELECT 'PASS 18_purge_access_logs';
