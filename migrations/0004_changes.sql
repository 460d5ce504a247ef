-- 0004_changes.sql: access changes for the changes feed, and their retention.
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after
-- 0001-0003. docs/changes-feed.md explains the whole design and why it never
-- misses a change; the short version for this file:
--
-- Row Level Security decides what a caller reads, so when a user's access
-- changes, rows that did not change appear or disappear for that user. The
-- feed learns about it from two append-only logs, stamped (like every synced
-- row) with the writing transaction's xid8 and read in the same xid window:
--
--   ferry.access_grants       (user, xid, scope)  "user can now read this scope";
--                             expanded when read, under RLS, into the scope's
--                             current rows (they are readable now).
--   ferry.access_revocations  (user, xid, table, row id)  one entry per row of
--                             the scope, listed when access is lost (the user
--                             can no longer enumerate them); served as
--                             {"id", "is_deleted": true, "revoked": true}
--                             unless the row is still readable some other way.
--
-- What a scope covers is declared in ferry.access_scopes by the app (a scope
-- row and, per member table, the column that points at it); the app's own
-- triggers call ferry.record_access_grant / ferry.record_access_revocation
-- when its grant rows change. (Until the core and app tracks were split, the
-- study app's part was at the end of this file; it is now
-- examples/study/migrations/0004_study_access_scope.sql.)

-- ---------------------------------------------------------------------------
-- Generic mechanism (schema ferry)
-- ---------------------------------------------------------------------------

-- Which rows a scope covers: rows of member_table whose member_column equals
-- the scope row's id (the scope table itself is a member through its id).
-- A member column should be a foreign key to the scope table: revocation
-- relies on the key-share lock that inserting such a row holds on its scope
-- row (see ferry.record_access_revocation).
CREATE TABLE ferry.access_scopes (
    scope_table   regclass NOT NULL,
    member_table  regclass NOT NULL,
    member_column name     NOT NULL,
    PRIMARY KEY (scope_table, member_table)
);
COMMENT ON TABLE ferry.access_scopes IS
    'Declares what gaining or losing access to a scope row means for the changes feed.';

CREATE TABLE ferry.access_grants (
    user_id     uuid        NOT NULL REFERENCES ferry.users ON DELETE CASCADE,
    xid         xid8        NOT NULL DEFAULT pg_current_xact_id(),
    scope_table regclass    NOT NULL,
    scope_id    text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, xid, scope_table, scope_id)
);
COMMENT ON TABLE ferry.access_grants IS
    'A user gained access to a scope in transaction xid; the feed serves the scope''s rows at that position.';
CREATE INDEX access_grants_created_at_idx ON ferry.access_grants (created_at);

CREATE TABLE ferry.access_revocations (
    user_id    uuid        NOT NULL REFERENCES ferry.users ON DELETE CASCADE,
    xid        xid8        NOT NULL DEFAULT pg_current_xact_id(),
    table_oid  regclass    NOT NULL,
    row_id     text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, xid, table_oid, row_id)
);
COMMENT ON TABLE ferry.access_revocations IS
    'A user lost access to a row in transaction xid; the feed serves a revoked stub at that position.';
CREATE INDEX access_revocations_created_at_idx ON ferry.access_revocations (created_at);

-- The serve role reads its own entries only, and never writes them.
ALTER TABLE ferry.access_grants ENABLE ROW LEVEL SECURITY;
ALTER TABLE ferry.access_revocations ENABLE ROW LEVEL SECURITY;
CREATE POLICY access_grants_own ON ferry.access_grants FOR SELECT
    USING (user_id = ferry.current_user_id());
CREATE POLICY access_revocations_own ON ferry.access_revocations FOR SELECT
    USING (user_id = ferry.current_user_id());

-- Records that p_user can now read the scope row p_scope_id of p_scope.
-- Called from the app's triggers (inside the granting transaction).
CREATE FUNCTION ferry.record_access_grant(p_user uuid, p_scope regclass, p_scope_id text) RETURNS void
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    INSERT INTO ferry.access_grants (user_id, scope_table, scope_id)
         VALUES (p_user, p_scope, p_scope_id)
    ON CONFLICT DO NOTHING;
$$;

-- Records that p_user can no longer read the scope row p_scope_id of p_scope:
-- one revocation per member row, listed now, because afterwards RLS hides
-- them from the user.
--
-- Why the lock: a transaction still in flight may be inserting a member row
-- (a new term of the set). If it commits after this listing but before the
-- revoking transaction commits, the user may already have received that row
-- through the feed (its xid is below the frontier while the user still had
-- access), and the list would lack it: the user would keep it forever. Such
-- an insert holds FOR KEY SHARE on the scope row (its foreign key check) until
-- it ends; FOR UPDATE waits for it, and the listing below (a new statement,
-- hence a new snapshot under READ COMMITTED) then sees it. Inserts that start
-- later wait for this transaction and are invisible to the user by then.
CREATE FUNCTION ferry.record_access_revocation(p_user uuid, p_scope regclass, p_scope_id text) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_member record;
    v_type text;
BEGIN
    SELECT format_type(a.atttypid, a.atttypmod) INTO v_type
      FROM pg_attribute a WHERE a.attrelid = p_scope AND a.attname = 'id' AND NOT a.attisdropped;
    EXECUTE format('SELECT 1 FROM %s WHERE id = CAST($1 AS %s) FOR UPDATE', p_scope, v_type) USING p_scope_id;
    FOR v_member IN
        SELECT s.member_table, s.member_column, format_type(a.atttypid, a.atttypmod) AS column_type
          FROM ferry.access_scopes s
          JOIN pg_attribute a ON a.attrelid = s.member_table AND a.attname = s.member_column AND NOT a.attisdropped
         WHERE s.scope_table = p_scope
    LOOP
        EXECUTE format($f$
            INSERT INTO ferry.access_revocations (user_id, table_oid, row_id)
            SELECT $1, %2$L::regclass, m.id::text FROM %1$s m WHERE m.%3$I = CAST($2 AS %4$s)
            ON CONFLICT DO NOTHING
        $f$, v_member.member_table, v_member.member_table::oid, v_member.member_column, v_member.column_type)
        USING p_user, p_scope_id;
    END LOOP;
END
$$;

-- Retention of the access logs, beside ferry.purge_tombstones (0001): the
-- same age, the same batching (call until it returns less than p_batch; each
-- call is one short transaction), and the same horizon. Forgetting an entry
-- is like purging a tombstone: a cursor from before it could miss it, so the
-- purge horizon rises to the highest forgotten xid and such cursors get 410.
-- Returns the number of entries deleted.
CREATE FUNCTION ferry.purge_access_log(p_older_than_ms bigint, p_batch int) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_cutoff timestamptz;
    v_max xid8;
    v_n bigint;
    v_total bigint := 0;
BEGIN
    IF p_older_than_ms IS NULL OR p_older_than_ms < 0 OR p_batch IS NULL OR p_batch < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'purge_access_log needs a non-negative age and a positive batch size';
    END IF;
    v_cutoff := clock_timestamp() - make_interval(secs => p_older_than_ms / 1000.0);
    -- The victims are picked once (MATERIALIZED): a LIMIT ... SKIP LOCKED
    -- subquery that a join re-scans would skip the rows just deleted and
    -- pick more, so one call could delete far more than p_batch.
    WITH v AS MATERIALIZED (
        SELECT ctid FROM ferry.access_grants WHERE created_at < v_cutoff LIMIT p_batch FOR UPDATE SKIP LOCKED
    ), g AS (
        DELETE FROM ferry.access_grants a USING v WHERE a.ctid = v.ctid RETURNING a.xid)
    SELECT count(*), max(xid) INTO v_n, v_max FROM g;
    v_total := v_n;
    IF v_max IS NOT NULL THEN
        UPDATE ferry.purge_horizon SET horizon_xid = greatest(horizon_xid, v_max), purged_at = now();
    END IF;
    IF v_total < p_batch THEN
        WITH v AS MATERIALIZED (
            SELECT ctid FROM ferry.access_revocations WHERE created_at < v_cutoff
             LIMIT p_batch - v_total FOR UPDATE SKIP LOCKED
        ), r AS (
            DELETE FROM ferry.access_revocations a USING v WHERE a.ctid = v.ctid RETURNING a.xid)
        SELECT count(*), max(xid) INTO v_n, v_max FROM r;
        v_total := v_total + v_n;
        IF v_max IS NOT NULL THEN
            UPDATE ferry.purge_horizon SET horizon_xid = greatest(horizon_xid, v_max), purged_at = now();
        END IF;
    END IF;
    RETURN v_total;
END
$$;

REVOKE EXECUTE ON FUNCTION
    ferry.record_access_grant(uuid, regclass, text),
    ferry.record_access_revocation(uuid, regclass, text),
    ferry.purge_access_log(bigint, int)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.purge_access_log(bigint, int) TO ferry_app;
GRANT SELECT ON ferry.access_scopes, ferry.access_grants, ferry.access_revocations TO ferry_app;
