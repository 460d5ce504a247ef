-- role: owner
-- ferry.purge_tombstones: really deletes old tombstones (and what cascades
-- from them), in batches, records the purge horizon, and cleans up expired
-- tokens, idempotency keys and stale login failures.

SELECT pg_temp.expect_error('SELECT ferry.purge_tombstones(-1, 10)', '22023');
SELECT pg_temp.expect_error('SELECT ferry.purge_tombstones(0, 0)', '22023');

-- Start clean: earlier test files left tombstones behind.
SELECT pg_sleep(0.01);
SELECT ferry.purge_tombstones(0, 1000000);
SELECT pg_temp.check(ferry.purge_tombstones(0, 1000000) = 0, 'nothing left to purge');

CREATE SCHEMA purgetest;
CREATE TABLE purgetest.items (id int PRIMARY KEY, x text);
SELECT ferry.enable_sync('purgetest.items');
INSERT INTO purgetest.items (id, x) SELECT g, 'x' FROM generate_series(1, 10) g;
DELETE FROM purgetest.items WHERE id <= 5;
SELECT set_config('purgetest.delete_xid', (SELECT max(_ferry_xid)::text FROM purgetest.items WHERE is_deleted), false);
SELECT pg_sleep(0.01);

-- Young tombstones stay; old ones go, batch by batch; live rows never.
DO $$
DECLARE h ferry.purge_horizon;
BEGIN
    PERFORM pg_temp.check(ferry.purge_tombstones(3600 * 1000, 100) = 0, 'tombstones younger than the age stay');
    PERFORM pg_temp.check((SELECT count(*) FROM purgetest.items) = 10, 'all ten rows still there');
    SELECT * INTO h FROM ferry.purge_horizon;
    PERFORM pg_temp.check(h.horizon_xid < current_setting('purgetest.delete_xid')::xid8, 'horizon below the new tombstones');
END $$;
SELECT pg_temp.check(ferry.purge_tombstones(0, 2) = 2, 'batch 1 purges 2');
SELECT pg_temp.check(ferry.purge_tombstones(0, 2) = 2, 'batch 2 purges 2');
SELECT pg_temp.check(ferry.purge_tombstones(0, 2) = 1, 'batch 3 purges the last one');
SELECT pg_temp.check(ferry.purge_tombstones(0, 2) = 0, 'batch 4 purges nothing');
DO $$
DECLARE h ferry.purge_horizon;
BEGIN
    PERFORM pg_temp.check((SELECT array_agg(id ORDER BY id) FROM purgetest.items) = ARRAY[6, 7, 8, 9, 10], 'only live rows remain');
    SELECT * INTO h FROM ferry.purge_horizon;
    PERFORM pg_temp.check(h.horizon_xid = current_setting('purgetest.delete_xid')::xid8,
                          format('horizon is the purged tombstones'' xid (%s vs %s)', h.horizon_xid, current_setting('purgetest.delete_xid')));
    PERFORM pg_temp.check(h.purged_at IS NOT NULL, 'purged_at recorded');
END $$;

-- Purging mode ends with the call: a DELETE right after, in the same
-- transaction, is soft again.
DO $$
BEGIN
    PERFORM ferry.purge_tombstones(0, 10);
    PERFORM pg_temp.check(coalesce(current_setting('ferry.purging', true), '') <> 'on', 'ferry.purging restored');
    DELETE FROM purgetest.items WHERE id = 6;
    PERFORM pg_temp.check((SELECT is_deleted FROM purgetest.items WHERE id = 6), 'DELETE after a purge is soft');
END $$;
SELECT pg_sleep(0.01);
SELECT pg_temp.check(ferry.purge_tombstones(0, 10) = 1, 'purge the row 6 tombstone');

-- A purged set takes its children with it (ON DELETE CASCADE), and the
-- horizon counts them: here a term changed after the set was deleted.
DO $$
DECLARE u uuid; s uuid; t uuid; f uuid;
BEGIN
    u := ferry.create_user('purge_owner', 'pw');
    PERFORM set_config('purgetest.user', u::text, false);
    INSERT INTO app.study_sets (creator_id, title) VALUES (u, 'doomed') RETURNING id INTO s;
    INSERT INTO app.terms (set_id, word) VALUES (s, 'child') RETURNING id INTO t;
    INSERT INTO app.folders (owner_id, name) VALUES (u, 'keeps') RETURNING id INTO f;
    INSERT INTO app.folder_sets (folder_id, set_id) VALUES (f, s);
    INSERT INTO app.set_collaborators (set_id, user_id) VALUES (s, u);
    PERFORM set_config('purgetest.set', s::text, false);
    PERFORM set_config('purgetest.term', t::text, false);
    PERFORM set_config('purgetest.folder', f::text, false);
END $$;
DELETE FROM app.study_sets WHERE id = current_setting('purgetest.set')::uuid;
UPDATE app.terms SET word = 'edited later' WHERE id = current_setting('purgetest.term')::uuid;
SELECT set_config('purgetest.term_xid', (SELECT _ferry_xid::text FROM app.terms WHERE id = current_setting('purgetest.term')::uuid), false);
SELECT pg_sleep(0.01);
DO $$
DECLARE n bigint; s uuid := current_setting('purgetest.set')::uuid;
BEGIN
    n := ferry.purge_tombstones(0, 100);
    -- The set's tombstone, and those 0014 gave its term and its folder link: each
    -- goes either directly or by the set's ON DELETE CASCADE, whichever table the
    -- purge visits first.
    PERFORM pg_temp.check(n BETWEEN 1 AND 3, 'the set''s tombstones purged, got ' || n);
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM app.study_sets WHERE id = s), 'set gone');
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM app.terms WHERE set_id = s), 'its terms gone');
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM app.folder_sets WHERE set_id = s), 'its folder links gone');
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM app.set_collaborators WHERE set_id = s), 'its collaborators gone');
    PERFORM pg_temp.check(EXISTS (SELECT 1 FROM app.folders WHERE id = current_setting('purgetest.folder')::uuid), 'the folder stays');
    PERFORM pg_temp.check((SELECT horizon_xid FROM ferry.purge_horizon) = current_setting('purgetest.term_xid')::xid8,
                          'horizon is the newest cascaded row''s xid');
END $$;

-- Purging by hand (another tool) works with ferry.purging = on; TRUNCATE too.
DO $$
BEGIN
    PERFORM set_config('ferry.purging', 'on', true);
    DELETE FROM purgetest.items WHERE id = 7;
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM purgetest.items WHERE id = 7), 'hard delete while purging');
    TRUNCATE purgetest.items;
    PERFORM pg_temp.check(NOT EXISTS (SELECT 1 FROM purgetest.items), 'truncate while purging');
END $$;

-- Expired and revoked tokens, expired idempotency keys, stale login failures.
DO $$
DECLARE u uuid := current_setting('purgetest.user')::uuid;
BEGIN
    PERFORM ferry.issue_token(u, sha256('live'), 3600);
    PERFORM ferry.issue_token(u, sha256('revoked'), 3600);
    PERFORM ferry.revoke_token(sha256('revoked'));
    INSERT INTO ferry.tokens (token_hash, user_id, expires_at) VALUES (sha256('expired'), u, now() - interval '1 second');
    INSERT INTO ferry.idempotency_keys (user_id, key, request_hash, expires_at) VALUES
        (u, 'old', '\x00', now() - interval '1 second'),
        (u, 'new', '\x00', now() + interval '1 hour');
    INSERT INTO ferry.login_failures (name, failures, last_failure) VALUES
        ('stale', 3, now() - interval '2 days'),
        ('fresh', 3, now());
END $$;
SELECT ferry.purge_tombstones(0, 10);
DO $$
BEGIN
    PERFORM pg_temp.check((SELECT array_agg(token_hash) FROM ferry.tokens WHERE token_hash IN (sha256('live'), sha256('revoked'), sha256('expired')))
                          = ARRAY[sha256('live')], 'only the live token remains');
    PERFORM pg_temp.check((SELECT array_agg(key) FROM ferry.idempotency_keys WHERE key IN ('old', 'new')) = ARRAY['new'],
                          'only the unexpired idempotency key remains');
    PERFORM pg_temp.check((SELECT array_agg(name) FROM ferry.login_failures WHERE name IN ('stale', 'fresh')) = ARRAY['fresh'],
                          'only the fresh login failure counter remains');
END $$;

SELECT 'PASS 05_purge';
