-- functions/feed.sql: The changes feed: stamps and the frontier, the feed's hold, read paths, the access logs, and the purges.
--
-- A repeatable file (migrations/README.md): the current definition of each of its
-- functions, triggers and policies, applied by `ferry migrate` after the versioned
-- files whenever its checksum differs from the one recorded in
-- ferry.schema_repeatables. Change a function here, never in a new versioned file.
-- Every statement must be safe to run again on a database that already has it.
-- Each function keeps the comment of the versioned file that last defined it.

-- Really deletes tombstones older than p_older_than_ms (an age in ms, e.g.
-- retention_days * 86400000), at most p_batch rows per call across all
-- synced tables, so that each call is a short transaction: call it until it
-- returns less than p_batch. Rows of other tables that reference a purged row
-- with ON DELETE CASCADE go with it. Raises the purge horizon to the highest
-- purged _ferry_xid. Also deletes expired or revoked tokens, expired
-- idempotency keys and stale login failure counters. Returns the number of
-- tombstones deleted (cascaded rows not counted).
-- (Versioned definitions before this file: 0001, 0006; the comment is 0001's.)
CREATE OR REPLACE FUNCTION ferry.purge_tombstones(p_older_than_ms bigint, p_batch integer)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_was_purging text := current_setting('ferry.purging', true);
    v_cutoff bigint;
    v_table regclass;
    v_n bigint;
    v_total bigint := 0;
    v_max text;
BEGIN
    IF p_older_than_ms IS NULL OR p_older_than_ms < 0 OR p_batch IS NULL OR p_batch < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'purge_tombstones needs a non-negative age and a positive batch size';
    END IF;
    v_cutoff := ferry.now_ms() - p_older_than_ms;
    -- Transaction-local, and put back before returning. (A function's SET
    -- clause cannot name a placeholder setting without superuser in PG15.)
    PERFORM set_config('ferry.purging', 'on', true);
    PERFORM set_config('ferry.purged_xid', '', true);

    FOR v_table IN SELECT table_oid FROM ferry.sync_resources ORDER BY schema_name, table_name LOOP
        EXIT WHEN v_total >= p_batch;
        -- The victims are picked once (MATERIALIZED): as an IN (subquery) the
        -- LIMIT could be re-evaluated per scan and delete more than a batch.
        EXECUTE format($f$
            WITH victims AS MATERIALIZED (
                SELECT id FROM %1$s
                 WHERE is_deleted AND last_modified < $1
                 LIMIT $2 FOR UPDATE SKIP LOCKED),
            d AS (
                DELETE FROM %1$s t USING victims v
                 WHERE t.id = v.id
                RETURNING 1)
            SELECT count(*) FROM d
        $f$, v_table) INTO v_n USING v_cutoff, p_batch - v_total;
        v_total := v_total + v_n;
    END LOOP;

    v_max := NULLIF(current_setting('ferry.purged_xid', true), '');
    IF v_max IS NOT NULL THEN
        UPDATE ferry.purge_horizon
           SET horizon_xid = greatest(horizon_xid, v_max::xid8), purged_at = now();
    END IF;
    PERFORM set_config('ferry.purged_xid', '', true);
    PERFORM set_config('ferry.purging', coalesce(v_was_purging, ''), true);

    DELETE FROM ferry.tokens WHERE expires_at < now() OR revoked;
    DELETE FROM ferry.idempotency_keys WHERE expires_at < now();
    DELETE FROM ferry.login_failures
     WHERE greatest(last_failure, coalesce(locked_until, last_failure)) < now() - interval '1 day';
    RETURN v_total;
END
$function$;
REVOKE ALL ON FUNCTION ferry.purge_tombstones(bigint,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.purge_tombstones(bigint,integer) TO ferry_app;

-- Records that p_user can now read the scope row p_scope_id of p_scope.
-- Called from the app's triggers (inside the granting transaction).
-- (Versioned definitions before this file: 0004.)
CREATE OR REPLACE FUNCTION ferry.record_access_grant(p_user uuid, p_scope regclass, p_scope_id text)
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    INSERT INTO ferry.access_grants (user_id, scope_table, scope_id)
         VALUES (p_user, p_scope, p_scope_id)
    ON CONFLICT DO NOTHING;
$function$;
REVOKE ALL ON FUNCTION ferry.record_access_grant(uuid,regclass,text) FROM PUBLIC;

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
-- (Versioned definitions before this file: 0004, 0025; the comment is 0004's.)
--
-- Only rows the user could read lose a revocation (issue 46): every member
-- table's, except the rows of a members rule's table of the scope that the
-- user never read: all of them when the access lost came through a grant
-- (p_through_grant: a student reads a set, never who collaborates on it), and
-- those of a members table whose rows are private to the scope's owner and
-- each row's own member (ferry.rules_private_members: a class's students do
-- not read one another's rows). The user's own member row stays readable to
-- them, so the feed sends it as it is (its tombstone), not as a revoked stub.
CREATE OR REPLACE FUNCTION ferry.record_access_revocation(p_user uuid, p_scope regclass, p_scope_id text, p_through_grant boolean)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
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
           AND NOT EXISTS (SELECT 1 FROM ferry.sync_rules m
                            WHERE m.table_oid = s.member_table AND m.kind = 'members' AND m.target_table = p_scope
                              AND (p_through_grant OR ferry.rules_private_members(m.table_oid)))
    LOOP
        EXECUTE format($f$
            INSERT INTO ferry.access_revocations (user_id, table_oid, row_id, scope_table, scope_id)
            SELECT $1, %2$L::regclass, m.id::text, $3, $2 FROM %1$s m WHERE m.%3$I = CAST($2 AS %4$s)
            ON CONFLICT DO NOTHING
        $f$, v_member.member_table, v_member.member_table::oid, v_member.member_column, v_member.column_type)
        USING p_user, p_scope_id, p_scope;
    END LOOP;
END
$function$;
REVOKE ALL ON FUNCTION ferry.record_access_revocation(uuid,regclass,text,boolean) FROM PUBLIC;

-- The access p_user lost was their own (a member row, or an app's own
-- trigger): every member row they could read, as above.
CREATE OR REPLACE FUNCTION ferry.record_access_revocation(p_user uuid, p_scope regclass, p_scope_id text)
 RETURNS void
 LANGUAGE sql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT ferry.record_access_revocation(p_user, p_scope, p_scope_id, false);
$function$;
REVOKE ALL ON FUNCTION ferry.record_access_revocation(uuid,regclass,text) FROM PUBLIC;

-- Retention of the access logs, beside ferry.purge_tombstones (0001): the
-- same age, the same batching (call until it returns less than p_batch; each
-- call is one short transaction), and the same horizon. Forgetting an entry
-- is like purging a tombstone: a cursor from before it could miss it, so the
-- purge horizon rises to the highest forgotten xid and such cursors get 410.
-- Returns the number of entries deleted.
-- (Versioned definitions before this file: 0004, 0031; the comment is 0004's.)
CREATE OR REPLACE FUNCTION ferry.purge_access_log(p_older_than_ms bigint, p_batch integer)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_cutoff timestamptz;
    v_log text;
    v_max xid8;
    v_n bigint;
    v_total bigint := 0;
BEGIN
    IF p_older_than_ms IS NULL OR p_older_than_ms < 0 OR p_batch IS NULL OR p_batch < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'purge_access_log needs a non-negative age and a positive batch size';
    END IF;
    v_cutoff := clock_timestamp() - make_interval(secs => p_older_than_ms / 1000.0);
    -- The logs' names are this function's own constants, never input.
    FOREACH v_log IN ARRAY ARRAY['access_grants', 'access_revocations', 'public_grants', 'public_revocations'] LOOP
        EXIT WHEN v_total >= p_batch;
        -- The victims are picked once (MATERIALIZED): see 0004.
        EXECUTE format(
            'WITH v AS MATERIALIZED (SELECT ctid FROM ferry.%1$I WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED),
                  d AS (DELETE FROM ferry.%1$I a USING v WHERE a.ctid = v.ctid RETURNING a.xid)
             SELECT count(*), max(xid) FROM d', v_log)
            INTO v_n, v_max USING v_cutoff, p_batch - v_total;
        v_total := v_total + v_n;
        IF v_max IS NOT NULL THEN
            UPDATE ferry.purge_horizon SET horizon_xid = greatest(horizon_xid, v_max), purged_at = now();
        END IF;
    END LOOP;
    RETURN v_total;
END
$function$;
REVOKE ALL ON FUNCTION ferry.purge_access_log(bigint,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.purge_access_log(bigint,integer) TO ferry_app;

-- The read paths of p_schema's ruled tables, for the serve role (which may not
-- read ferry.sync_rules): one row per rule, with the table it reads through
-- (child, members), the members rule's scope-ids function, and whether the
-- rule's policies are the only permissive read policies of the table.
-- (Versioned definitions before this file: 0021, 0033; the comment is 0021's.)
CREATE OR REPLACE FUNCTION ferry.read_paths(p_schema name)
 RETURNS TABLE(table_name name, kind text, rule_column name, target_name name, member_column name, scope_ids_function text, rules_only boolean, through_name name)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT c.relname, r.kind, r.rule_column, t.relname, r.member_column,
           CASE WHEN r.kind IN ('members', 'grant') THEN ferry.rules_scope_ids_function(r.table_oid) END,
           c.relrowsecurity AND NOT EXISTS (
               SELECT 1 FROM pg_policy p
                WHERE p.polrelid = r.table_oid AND p.polpermissive AND p.polcmd IN ('r', '*')
                  AND p.polname NOT LIKE 'ferry\_rules\_%'),
           (SELECT h.relname FROM pg_class h WHERE h.oid = ferry.rules_through(r.table_oid) AND h.relnamespace = c.relnamespace)
      FROM ferry.sync_rules r
      JOIN pg_class c ON c.oid = r.table_oid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_class t ON t.oid = r.target_table
     WHERE n.nspname = p_schema
       AND (t.oid IS NULL OR t.relnamespace = c.relnamespace)
     ORDER BY 1
$function$;
REVOKE ALL ON FUNCTION ferry.read_paths(name) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.read_paths(name) TO ferry_app;

-- The frontier in the caller's snapshot (STABLE, like 0023's: callers
-- evaluate it once, in the statement that reads the page). Computed once per
-- snapshot in a transaction, and kept in the transaction-local setting
-- `ferry.frontier` with the snapshot it belongs to. Why: liveness is read as
-- it is now (a key tried, pg_xact_status), so two statements of one
-- REPEATABLE READ transaction could otherwise get two frontiers when a
-- transaction of the running set ends between them: both safe, but the same
-- feed read twice in one snapshot must give the same page and cursor. A
-- frontier stays valid for as long as its snapshot does: what no transaction
-- invisible to s can commit below it then, none can later.
-- (Versioned definitions before this file: 0023, 0032.)
CREATE OR REPLACE FUNCTION ferry.feed_frontier()
 RETURNS xid8
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    s pg_catalog.pg_snapshot := pg_catalog.pg_current_snapshot();
    v_kept text := pg_catalog.current_setting('ferry.frontier', true);
    v_frontier xid8;
BEGIN
    IF v_kept IS NOT NULL AND pg_catalog.split_part(v_kept, '@', 2) = s::text THEN
        RETURN pg_catalog.split_part(v_kept, '@', 1)::xid8;
    END IF;
    v_frontier := ferry.feed_frontier_of(s);
    PERFORM pg_catalog.set_config('ferry.frontier', v_frontier::text || '@' || s::text, true);
    RETURN v_frontier;
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.feed_frontier() TO PUBLIC;

-- What holds the changes feed back now, for /metrics and /readyz (issue 47,
-- item 5): the transaction the feed's frontier (ferry.feed_frontier(), 0023)
-- stopped at, when the frontier is below the snapshot's xmax; no row when
-- nothing holds it. That is the running transaction whose xid the frontier
-- is, or, when the frontier is the stamp floor (a transaction alive and
-- advertising nothing, held at what it will stamp at least, when the floor
-- could not rise), the oldest running one below it. Kinds, the most
-- actionable first:
--   prepared             a prepared transaction of this database (COMMIT PREPARED or ROLLBACK PREPARED ends it)
--   idle_in_transaction  its session waits for its client inside the transaction
--   synced_writer        it has stamped (written a synced row or an access log entry): it holds its stamp's
--                        advisory lock, which is what the frontier stops at; a table lock says nothing here
--                        (an UPDATE that matched no row takes RowExclusiveLock, a write to a partition locks
--                        the partition, a grant written by an unsynced table's trigger locks no synced table)
--   unsynced_writer      alive and advertising no stamp: the frontier fell back to it (the floor could not rise)
--   ended                it ended between the snapshot and the look (gone at the next)
-- Read-only transactions never hold it (0023); those of other databases only in
-- the fall-back, as any transaction that has stamped nothing.
--
-- SECURITY DEFINER, owned by the migration owner, so that it sees what the
-- owner sees of other roles' sessions: PostgreSQL hides their state and
-- xact_start unless the viewer is a member of their role or of
-- pg_read_all_stats. Grant the owner pg_read_all_stats (docs/OPERATIONS.md)
-- for the kind idle_in_transaction and the hold's start on every session;
-- without it, a session of another role is told apart by its locks only,
-- and held_ms is NULL (Ferry then counts from when it first saw the xid).
-- (Versioned definitions before this file: 0024.)
CREATE OR REPLACE FUNCTION ferry.feed_hold()
 RETURNS TABLE(xid text, kind text, held_ms bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    s pg_snapshot := pg_current_snapshot();
    v_frontier xid8 := ferry.feed_frontier();
    v_holder xid8;
BEGIN
    IF v_frontier >= pg_snapshot_xmax(s) THEN
        RETURN;
    END IF;
    SELECT x INTO v_holder FROM pg_snapshot_xip(s) x WHERE x <= v_frontier
     ORDER BY x = v_frontier DESC, x LIMIT 1;
    v_holder := coalesce(v_holder, v_frontier);
    RETURN QUERY
        SELECT v_holder::text,
               CASE WHEN p.transaction IS NOT NULL THEN 'prepared'
                    WHEN a.pid IS NULL THEN 'ended'
                    WHEN a.state LIKE 'idle in transaction%' THEN 'idle_in_transaction'
                    WHEN EXISTS (SELECT 1 FROM pg_locks l
                                  WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted
                                    AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())
                                    AND l.classid = 1181905529::oid AND l.objsubid = 2
                                    AND l.objid = (ferry.stamp_key(v_holder)::int8 & 4294967295)::oid) THEN 'synced_writer'
                    ELSE 'unsynced_writer' END,
               floor(extract(epoch FROM clock_timestamp() - coalesce(a.xact_start, p.prepared)) * 1000)::bigint
          FROM (SELECT 1) one
          LEFT JOIN pg_stat_activity a ON a.backend_xid = v_holder::xid
          LEFT JOIN pg_prepared_xacts p ON p.transaction = v_holder::xid AND p.database = current_database()
         LIMIT 1;
END
$function$;
REVOKE ALL ON FUNCTION ferry.feed_hold() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.feed_hold() TO ferry_app;

-- Whether this transaction reads public rows: set by the server
-- (set_config('ferry.public_reads', 'on', true)) around a GET, an Index and a
-- stream's pages only.
-- (Versioned definitions before this file: 0025.)
CREATE OR REPLACE FUNCTION ferry.public_reads()
 RETURNS boolean
 LANGUAGE sql
 STABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
RETURN (COALESCE(current_setting('ferry.public_reads'::text, true), ''::text) = 'on'::text);
GRANT EXECUTE ON FUNCTION ferry.public_reads() TO PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.public_reads() TO ferry_app;

-- The users with an access grant or revocation after p_after; NULL when the
-- logs hold p_limit entries or more there ("too many to tell": the caller
-- shares with nobody). At most p_limit entries are read, so a cursor from
-- last week costs what one from a second ago does.
-- (Versioned definitions before this file: 0030, which read at p_after too.)
--
-- After p_after, not at it, as ferry.window_keys reads (stop 63). p_after is
-- a frontier cursor's xid: its holder has every entry at it, and the page
-- reads strictly after it. Each caller (a stream's guard, a default stream's
-- window) shares only with users whose evidence (the scope rows or the root
-- they read) comes from a snapshot whose frontier is past the cursor, which
-- saw every entry at it. Read at it, the access given or taken in the
-- transaction a cursor stops at (often the one just delivered) sent its
-- users to a check of their own at the next write.
CREATE OR REPLACE FUNCTION ferry.access_changed_users(p_after xid8, p_limit integer)
 RETURNS uuid[]
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
    SELECT CASE WHEN count(*) >= p_limit THEN NULL ELSE coalesce(array_agg(DISTINCT u.user_id), '{}') END
      FROM (SELECT g.user_id FROM ferry.access_grants g WHERE g.xid > p_after
            UNION ALL
            SELECT r.user_id FROM ferry.access_revocations r WHERE r.xid > p_after
            LIMIT p_limit) u
$function$;
REVOKE ALL ON FUNCTION ferry.access_changed_users(xid8,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.access_changed_users(xid8,integer) TO ferry_app;
COMMENT ON FUNCTION ferry.access_changed_users(xid8,integer) IS
    'Users with an access grant or revocation after p_after, a frontier cursor''s xid (NULL for p_limit entries or more): they are answered by their own feed check.';

-- The rows of p_table changed after p_after and below p_upto, each as
-- a JSON array of its id and the values of p_columns, as text; NULL when
-- there are more than p_limit ("too many to tell": each waiter checks for
-- itself). Read past Row Level Security, for the default stream's fan-out
-- (docs/changes-feed.md, "Fan-out: one check for many users' default
-- streams"): the server decides from them which waiting users may read
-- which row. Only a synced table's id and the columns its sync rule names
-- (the paths' columns: who may read the row) are given, never its data.
-- STABLE: it reads in its caller's snapshot, so beside a page in one
-- statement it sees exactly the rows that page saw. After p_after, not at
-- it: p_after is a frontier cursor's xid, whose entries are delivered and
-- which a page reads strictly after; a row at it is in no page, and told
-- as one it made the reader's count differ from its page's (nobody shared).
CREATE OR REPLACE FUNCTION ferry.window_keys(p_table regclass, p_columns name[], p_after xid8, p_upto xid8, p_limit integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_rule ferry.sync_rules;
    v_column name;
    v_values text := 't.id::text';
    v_result text;
BEGIN
    SELECT r.* INTO v_rule FROM ferry.sync_rules r WHERE r.table_oid = p_table;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ferry.window_keys: % has no sync rule', p_table USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOREACH v_column IN ARRAY coalesce(p_columns, '{}') LOOP
        IF v_column IS DISTINCT FROM v_rule.rule_column AND v_column IS DISTINCT FROM v_rule.member_column THEN
            RAISE EXCEPTION 'ferry.window_keys: % is not a rule column of %', v_column, p_table USING ERRCODE = 'insufficient_privilege';
        END IF;
        v_values := v_values || format(', t.%I::text', v_column);
    END LOOP;
    EXECUTE format(
        'SELECT CASE WHEN count(*) > $3 THEN NULL ELSE coalesce(json_agg(json_build_array(%s)), ''[]'')::text END
           FROM (SELECT * FROM %s t WHERE t._ferry_xid > $1 AND t._ferry_xid < $2 LIMIT $3 + 1) t', v_values, p_table)
       INTO v_result USING p_after, p_upto, p_limit;
    RETURN v_result;
END
$function$;
REVOKE ALL ON FUNCTION ferry.window_keys(regclass,name[],xid8,xid8,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.window_keys(regclass,name[],xid8,xid8,integer) TO ferry_app;
COMMENT ON FUNCTION ferry.window_keys(regclass,name[],xid8,xid8,integer) IS
    'The ids and rule columns of p_table''s rows changed in (p_after, p_upto) (NULL past p_limit): which users may read them, decided by the server for the default stream''s fan-out.';

-- The low 32 bits of an xid8, as the int4 of an advisory lock key.
-- (Versioned definitions before this file: 0032.)
CREATE OR REPLACE FUNCTION ferry.stamp_key(p_value xid8)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
RETURN (((((p_value)::text)::bigint & '4294967295'::bigint) - CASE WHEN ((((p_value)::text)::bigint & '2147483648'::bigint) <> 0) THEN '4294967296'::bigint ELSE (0)::bigint END))::integer;
GRANT EXECUTE ON FUNCTION ferry.stamp_key(xid8) TO PUBLIC;

-- This transaction's stamp, taken at its first call (ferry.take_stamp(),
-- see above) and kept in the transaction-local setting `ferry.stamp`: a
-- savepoint rolled back takes it with its lock, and the next synced write
-- stamps again. ferry.stamp() runs per row: a SQL expression that PostgreSQL
-- inlines into the triggers' assignments (no function call, no SET clause to
-- save and restore settings); not SECURITY DEFINER, with qualified names.
-- ferry.take_stamp() runs once per transaction, as the writer. The generated
-- update triggers (ferry.sync_update_source) carry a copy of its body inline:
-- change both together.
-- (Versioned definitions before this file: 0032.)
CREATE OR REPLACE FUNCTION ferry.take_stamp()
 RETURNS xid8
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id();
    v_stamp xid8;
    v_void pg_catalog.text;
BEGIN
    -- Assignments, not PERFORM (issue 47): an assignment is a simple expression, a PERFORM a query.
    v_void := pg_catalog.pg_advisory_xact_lock_shared(1181905529, ferry.stamp_key(v_xid));
    -- After the lock, never before (see above). NULL until the floor is first set.
    v_stamp := greatest(v_xid, coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::text::xid8);
    IF v_stamp > v_xid
       AND coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) < v_stamp::text::int8 THEN
        v_void := pg_catalog.setval('ferry.stamp_floor_taken', v_stamp::text::int8);
    END IF;
    v_void := pg_catalog.set_config('ferry.stamp', v_stamp::text, true);
    RETURN v_stamp;
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.take_stamp() TO PUBLIC;

-- (Versioned definitions before this file: 0032.)
CREATE OR REPLACE FUNCTION ferry.stamp()
 RETURNS xid8
 LANGUAGE sql
RETURN COALESCE((NULLIF(current_setting('ferry.stamp'::text, true), ''::text))::xid8, ferry.take_stamp());
GRANT EXECUTE ON FUNCTION ferry.stamp() TO PUBLIC;

-- Raises the floor to p_to; true when the floor is at p_to or above now.
-- One raiser at a time (an advisory lock held for the call only, released
-- on error too), so that the floor never goes down; a caller that finds
-- another raising answers false and waits for the running transactions
-- instead. Never above this transaction's xmax (at most the next xid: a
-- floor above it would hold every later stamp above every frontier for a
-- while). SECURITY DEFINER: the serve role may not setval the sequence.
-- (Versioned definitions before this file: 0032.)
CREATE OR REPLACE FUNCTION ferry.raise_stamp_floor(p_to xid8)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_to int8 := least(p_to, pg_snapshot_xmax(pg_current_snapshot()))::text::int8;
BEGIN
    IF coalesce(pg_sequence_last_value('ferry.stamp_floor'), 0) >= p_to::text::int8 THEN
        RETURN true;
    END IF;
    IF v_to < p_to::text::int8 OR current_setting('transaction_read_only') = 'on' OR pg_is_in_recovery()
       OR NOT pg_try_advisory_lock(1181905530, 0) THEN
        RETURN false;
    END IF;
    BEGIN
        IF coalesce(pg_sequence_last_value('ferry.stamp_floor'), 0) < v_to THEN
            PERFORM setval('ferry.stamp_floor', v_to);
        END IF;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(1181905530, 0);
        RAISE;
    END;
    PERFORM pg_advisory_unlock(1181905530, 0);
    RETURN true;
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.raise_stamp_floor(xid8) TO PUBLIC;

-- When a stamp taken from the floor is at or above p_xmax (the frontier is
-- at most p_xmax, so it waits), the caller's transaction takes an xid: at its
-- end xmax passes that stamp, so the next frontier does too. Rare: only a
-- transaction that took its xid before a frontier computation raised the floor
-- past it, and stamped after, takes a stamp from the floor; and by the next
-- computation some larger xid has usually completed anyway. Not in a read-only
-- transaction or a standby (no xid there): the stamp then waits for the next
-- commit anywhere.
-- (Versioned definitions before this file: 0032.)
CREATE OR REPLACE FUNCTION ferry.pass_floor_stamps(p_xmax xid8)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
    IF coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) >= p_xmax::text::int8
       AND pg_catalog.current_setting('transaction_read_only') = 'off' AND NOT pg_catalog.pg_is_in_recovery() THEN
        PERFORM pg_catalog.pg_current_xact_id();
    END IF;
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.pass_floor_stamps(xid8) TO PUBLIC;

-- The feed's frontier of snapshot s (docs/changes-feed.md, "Order from
-- commit visibility"): every stamp below it is final in s. It raises the
-- floor (a side effect that changes no data and no snapshot) before it tries
-- any key, as above; PARALLEL UNSAFE, since a sequence cannot be set inside a
-- parallel query. Callers use ferry.feed_frontier(), below.
-- (Versioned definitions before this file: 0032.)
CREATE OR REPLACE FUNCTION ferry.feed_frontier_of(s pg_snapshot)
 RETURNS xid8
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    v_xmax xid8 := pg_catalog.pg_snapshot_xmax(s);
    v_cap xid8;
    v_frontier xid8;
    x xid8;
    v_held boolean := false;
    v_status pg_catalog.text;
BEGIN
    IF pg_catalog.pg_snapshot_xmin(s) = v_xmax THEN
        -- No transaction with an xid ran: whatever stamps later is at or above xmax.
        PERFORM ferry.pass_floor_stamps(v_xmax);
        RETURN v_xmax;
    END IF;
    -- What a transaction that advertises nothing now will stamp at least: the
    -- floor, read before any key is tried (raised to xmax, or as it is).
    IF ferry.raise_stamp_floor(v_xmax) THEN
        v_cap := v_xmax;
    ELSE
        v_cap := least(v_xmax, coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::text::xid8);
    END IF;
    v_frontier := v_xmax;
    BEGIN
        FOR x IN SELECT pg_catalog.pg_snapshot_xip(s) LOOP  -- in xid order
            v_held := pg_catalog.pg_try_advisory_lock(1181905529, ferry.stamp_key(x));
            IF v_held THEN
                PERFORM pg_catalog.pg_advisory_unlock(1181905529, ferry.stamp_key(x));
                v_held := false;
                v_status := pg_catalog.pg_xact_status(x);
                IF v_status = 'in progress' THEN
                    -- Alive, advertising nothing: it will stamp at or above the cap.
                    v_frontier := least(v_frontier, greatest(x, v_cap));
                    CONTINUE;
                ELSIF v_status = 'aborted' THEN
                    -- Rolled back: whatever it stamped is gone for good, and
                    -- it stamps nothing more. On a busy cluster (failed writes,
                    -- retries, other databases' work) this is the common way a
                    -- transaction ends between the snapshot and the look.
                    CONTINUE;
                END IF;
            END IF;
            -- Advertises (may have stamped at its xid), or committed (may have
            -- stamped, invisibly); every later one is above it.
            RETURN least(v_frontier, x);
        END LOOP;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        -- Never leave a key held past the call: a writer would wait on it.
        IF v_held THEN
            PERFORM pg_catalog.pg_advisory_unlock(1181905529, ferry.stamp_key(x));
        END IF;
        RAISE;
    END;
    IF v_frontier = v_xmax THEN
        PERFORM ferry.pass_floor_stamps(v_xmax);
    END IF;
    RETURN v_frontier;
END
$function$;
GRANT EXECUTE ON FUNCTION ferry.feed_frontier_of(pg_snapshot) TO PUBLIC;

-- What in this database holds a transaction id its cluster has not had yet:
-- the stamp floors, the purge horizon, each synced table's highest stamp.
-- One row each, with the id and the cluster's next one; none when nothing
-- does. Every such id was at most the xmax of some snapshot of this cluster
-- when it was kept, and xmax only grows, so one past the xmax of a snapshot
-- taken after it was read came from another cluster: a logical dump restored
-- here (deploy/README.md, "Back up"). Then every write is stamped from the
-- floor above the feed's frontier, and no device sees it until the cluster
-- has used as many ids. `ferry check` reports it (and `ferry serve` logs it at
-- start). VOLATILE, so that the last statement reads xmax in a snapshot of
-- its own, after the values (a floor another session raised meanwhile is
-- then below it); SECURITY DEFINER, to read every row past the tables'
-- policies; each stamp is read from the (_ferry_xid, id) index.
-- (Versioned definitions before this file: none.)
CREATE OR REPLACE FUNCTION ferry.ids_ahead_of_cluster()
 RETURNS TABLE(object text, id text, next_xid text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'ferry', 'pg_temp'
AS $function$
DECLARE
    v_kept text[] := ARRAY[]::text[];
    v_ids xid8[] := ARRAY[]::xid8[];
    v_table regclass;
    v_max xid8;
    v_xmax xid8;
BEGIN
    v_kept := v_kept || 'ferry.stamp_floor'::text || 'ferry.stamp_floor_taken'::text || 'ferry.purge_horizon'::text;
    v_ids := v_ids || coalesce(pg_sequence_last_value('ferry.stamp_floor'), 0)::text::xid8
                   || coalesce(pg_sequence_last_value('ferry.stamp_floor_taken'), 0)::text::xid8
                   || (SELECT h.horizon_xid FROM ferry.purge_horizon h);
    -- Only tables that exist with the column: a dropped table's row names an oid.
    FOR v_table IN
        SELECT t.table_oid FROM ferry.synced_tables t
          JOIN pg_attribute a ON a.attrelid = t.table_oid AND a.attname = '_ferry_xid' AND NOT a.attisdropped
         ORDER BY t.table_oid::regclass::text
    LOOP
        EXECUTE format('SELECT max(_ferry_xid) FROM %s', v_table) INTO v_max;
        v_kept := v_kept || v_table::text;
        v_ids := v_ids || coalesce(v_max, '0'::xid8);
    END LOOP;
    SELECT pg_snapshot_xmax(pg_current_snapshot()) INTO v_xmax;
    RETURN QUERY SELECT k.object, k.id::text, v_xmax::text
                   FROM unnest(v_kept, v_ids) AS k(object, id)
                  WHERE k.id > v_xmax;
END
$function$;
REVOKE ALL ON FUNCTION ferry.ids_ahead_of_cluster() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.ids_ahead_of_cluster() TO ferry_app;

-- Triggers and policies of this family's tables (they need the functions above).

DROP POLICY IF EXISTS access_grants_own ON ferry.access_grants;
CREATE POLICY access_grants_own ON ferry.access_grants FOR SELECT TO PUBLIC
    USING ((user_id = ferry.current_user_id()));

DROP POLICY IF EXISTS access_revocations_own ON ferry.access_revocations;
CREATE POLICY access_revocations_own ON ferry.access_revocations FOR SELECT TO PUBLIC
    USING ((user_id = ferry.current_user_id()));
