-- 0032_feed_stamps.sql: a transaction that has written no synced row never
-- holds the changes feed back (issue 47, item 2).
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0031.
-- Ferry's own: it changes ferry.* only and works for any app schema.
--
-- Until now a synced row was stamped with its writer's xid, so the feed's
-- frontier (0023) had to stay below every running transaction of this
-- database that held an xid: any of them could still write a synced row
-- stamped with that old xid. A migration of an unsynced table, a batch job, a
-- session idle in a transaction after one write anywhere, a `SELECT ... FOR
-- UPDATE`: each held every device of every user for as long as it ran.
--
-- Now a transaction's synced rows, its tombstones, its access grants and
-- revocations, its public grants and revocations and its live hints carry its
-- *stamp* (ferry.stamp()), taken at its first synced write:
--
--   stamp = greatest(its xid, the stamp floor)
--
-- The stamp floor (ferry.stamp_floor, an unlogged sequence: read outside any
-- snapshot, written without WAL and without giving the writer an xid) only
-- rises. Before the frontier passes a running transaction that has stamped
-- nothing, ferry.feed_frontier() raises the floor to its snapshot's xmax: so
-- whatever that transaction stamps later is at or above every frontier
-- computed so far, and the frontier need not wait for it.
--
-- While it runs, a transaction that has stamped advertises it: at its first
-- synced write it takes a shared advisory lock (transaction-level, in this
-- database, key (1181905529, low 32 bits of its xid)) *before* it reads the
-- floor, and holds it until it ends. A frontier computation raises the floor
-- to its snapshot's xmax, then looks at each transaction T of its snapshot's
-- running set in xid order, and stops at the first that may still commit a
-- stamp below xmax:
--   - T advertises (an exclusive try of its key fails): it may have stamped
--     at its xid, so the frontier is its xid;
--   - T advertises nothing and is still in progress (asked after the try):
--     it takes its lock after the try, so it reads the floor after the floor
--     was raised, and stamps at or above this snapshot's xmax: it does not
--     hold the frontier (when the floor could not be raised, below);
--   - T advertises nothing and has ended: it may have stamped and committed
--     (invisibly to this snapshot) before the try, so the frontier is its xid.
-- A transaction outside the running set either ended before the snapshot
-- (visible to it, and final) or took its xid after it (so its stamp is at or
-- above xmax). The try holds the key for an instant (taken and released at
-- once, released on error and on cancel too), so a writer stamping at that
-- instant waits that long.
--
-- When the floor cannot be raised (a read-only transaction, such as the
-- console's "see as a user"; a standby; another frontier computation raising
-- it at that moment), the floor as read before the first try stands in for
-- xmax: a transaction alive and advertising nothing holds the frontier at
-- greatest(its xid, that floor), what it will stamp at least.
--
-- Stamps may repeat between transactions (two may stamp with the same floor):
-- the feed reads a window of stamps [cursor, frontier) in the latest state of
-- each row, so equal stamps are one position, as they are inside one
-- transaction. The access and public logs insert with ON CONFLICT DO NOTHING.
--
-- Cost: per transaction, at its first synced write, one shared advisory lock,
-- a read of the floor and a setting; per synced row, reading that setting.
-- Per frontier computation while transactions run, a read of the floor (and
-- a setval without WAL when it is below xmax), then per running transaction
-- up to the first that holds: a lock tried and released, and its status. A
-- prepared transaction keeps its locks, so it is seen as before. (Reading
-- pg_locks instead cost 0.7 ms a call on this machine, even with 7 locks: it
-- scans the whole lock and predicate-lock tables.)
-- A transaction that writes synced rows with triggers disabled (replication
-- apply, pg_restore --disable-triggers) stamps nothing, as before.

-- The cut-over: a transaction that wrote synced rows with the old triggers
-- (stamped with its xid, advertising nothing) must not outlive this
-- migration, or the new frontier could pass its rows. SHARE mode waits for
-- every transaction that writes a synced table now, and makes new writers wait
-- until this commits, after which they run the new triggers.
DO $$
DECLARE
    v_table regclass;
BEGIN
    FOR v_table IN SELECT s.table_oid FROM ferry.synced_tables s ORDER BY s.table_oid::oid LOOP
        EXECUTE format('LOCK TABLE %s IN SHARE MODE', v_table);
    END LOOP;
END
$$;

CREATE UNLOGGED SEQUENCE ferry.stamp_floor AS bigint MINVALUE 0 START WITH 0;
COMMENT ON SEQUENCE ferry.stamp_floor IS
    'The least stamp a transaction that stamps from now on may take (0032): raised by ferry.feed_frontier(), never lowered.';
-- Any writer reads it (its value is a transaction id: nothing secret).
GRANT SELECT ON SEQUENCE ferry.stamp_floor TO PUBLIC;

-- The greatest stamp taken from the floor (above its writer's xid), as
-- writers set it. Why: a stamp taken from the floor may equal the xmax of
-- every snapshot until some transaction with a larger xid completes, and the
-- frontier never passes xmax; in a quiet database nothing might for a long
-- time, and the row would wait. A frontier computation that finds this at or
-- above its xmax takes an xid for its own transaction (see feed_frontier),
-- whose end moves xmax past it. Writers set it without ordering (a lost
-- update only delays a row until the next commit anywhere, never loses it).
CREATE UNLOGGED SEQUENCE ferry.stamp_floor_taken AS bigint MINVALUE 0 START WITH 0;
GRANT SELECT, UPDATE ON SEQUENCE ferry.stamp_floor_taken TO PUBLIC;

-- The low 32 bits of an xid8, as the int4 of an advisory lock key.
CREATE FUNCTION ferry.stamp_key(p_value xid8) RETURNS int4
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((p_value::text::int8 & 4294967295) - CASE WHEN (p_value::text::int8 & 2147483648) <> 0 THEN 4294967296 ELSE 0 END)::int4;
GRANT EXECUTE ON FUNCTION ferry.stamp_key(xid8) TO PUBLIC;

-- This transaction's stamp, taken at its first call (ferry.take_stamp(),
-- see above) and kept in the transaction-local setting `ferry.stamp`: a
-- savepoint rolled back takes it with its lock, and the next synced write
-- stamps again. ferry.stamp() runs per row: a SQL expression that PostgreSQL
-- inlines into the triggers' assignments (no function call, no SET clause to
-- save and restore settings); not SECURITY DEFINER, with qualified names.
-- ferry.take_stamp() runs once per transaction, as the writer.
CREATE FUNCTION ferry.take_stamp() RETURNS xid8
    LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_xid xid8 := pg_catalog.pg_current_xact_id();
    v_stamp xid8;
BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock_shared(1181905529, ferry.stamp_key(v_xid));
    -- After the lock, never before (see above). NULL until the floor is first set.
    v_stamp := greatest(v_xid, coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor'), 0)::text::xid8);
    IF v_stamp > v_xid
       AND coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) < v_stamp::text::int8 THEN
        PERFORM pg_catalog.setval('ferry.stamp_floor_taken', v_stamp::text::int8);
    END IF;
    PERFORM pg_catalog.set_config('ferry.stamp', v_stamp::text, true);
    RETURN v_stamp;
END
$$;

CREATE FUNCTION ferry.stamp() RETURNS xid8
    LANGUAGE sql VOLATILE
RETURN coalesce(nullif(pg_catalog.current_setting('ferry.stamp', true), '')::xid8, ferry.take_stamp());
GRANT EXECUTE ON FUNCTION ferry.take_stamp(), ferry.stamp() TO PUBLIC;

-- Raises the floor to p_to; true when the floor is at p_to or above now.
-- One raiser at a time (an advisory lock held for the call only, released
-- on error too), so that the floor never goes down; a caller that finds
-- another raising answers false and waits for the running transactions
-- instead. Never above this transaction's xmax (at most the next xid: a
-- floor above it would hold every later stamp above every frontier for a
-- while). SECURITY DEFINER: the serve role may not setval the sequence.
CREATE FUNCTION ferry.raise_stamp_floor(p_to xid8) RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
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
$$;
GRANT EXECUTE ON FUNCTION ferry.raise_stamp_floor(xid8) TO PUBLIC;

-- When a stamp taken from the floor is at or above p_xmax (the frontier is
-- at most p_xmax, so it waits), the caller's transaction takes an xid: at its
-- end xmax passes that stamp, so the next frontier does too. Rare: only a
-- transaction that took its xid before a frontier computation raised the floor
-- past it, and stamped after, takes a stamp from the floor; and by the next
-- computation some larger xid has usually completed anyway. Not in a read-only
-- transaction or a standby (no xid there): the stamp then waits for the next
-- commit anywhere.
CREATE FUNCTION ferry.pass_floor_stamps(p_xmax xid8) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
BEGIN
    IF coalesce(pg_catalog.pg_sequence_last_value('ferry.stamp_floor_taken'), 0) >= p_xmax::text::int8
       AND pg_catalog.current_setting('transaction_read_only') = 'off' AND NOT pg_catalog.pg_is_in_recovery() THEN
        PERFORM pg_catalog.pg_current_xact_id();
    END IF;
END
$$;
GRANT EXECUTE ON FUNCTION ferry.pass_floor_stamps(xid8) TO PUBLIC;

-- The feed's frontier of snapshot s (docs/changes-feed.md, "Order from
-- commit visibility"): every stamp below it is final in s. It raises the
-- floor (a side effect that changes no data and no snapshot) before it tries
-- any key, as above; PARALLEL UNSAFE, since a sequence cannot be set inside a
-- parallel query. Callers use ferry.feed_frontier(), below.
CREATE FUNCTION ferry.feed_frontier_of(s pg_catalog.pg_snapshot) RETURNS xid8
    LANGUAGE plpgsql STABLE PARALLEL UNSAFE
AS $$
DECLARE
    v_xmax xid8 := pg_catalog.pg_snapshot_xmax(s);
    v_cap xid8;
    v_frontier xid8;
    x xid8;
    v_held boolean := false;
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
                IF pg_catalog.pg_xact_status(x) = 'in progress' THEN
                    -- Alive, advertising nothing: it will stamp at or above the cap.
                    v_frontier := least(v_frontier, greatest(x, v_cap));
                    CONTINUE;
                END IF;
            END IF;
            -- Advertises (may have stamped at its xid), or ended (may have,
            -- invisibly); every later one is above it.
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
$$;

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
CREATE OR REPLACE FUNCTION ferry.feed_frontier() RETURNS xid8
    LANGUAGE plpgsql STABLE PARALLEL UNSAFE
AS $$
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
$$;
GRANT EXECUTE ON FUNCTION ferry.feed_frontier_of(pg_catalog.pg_snapshot), ferry.feed_frontier() TO PUBLIC;

-- What holds the feed back (0024) needs no change: the frontier is again the
-- xid of the transaction holding it, and a transaction that has stamped
-- holds RowExclusiveLock on the synced table it wrote (0024's `synced_writer`).
-- `unsynced_writer` now shows only when the floor could not be raised and
-- is below an unstamped transaction's xid (above).

-- Every place that stamped with pg_current_xact_id() now stamps with
-- ferry.stamp(): the generic triggers (0018's bodies), the generators of each
-- table's update and notify functions (wrapped, as 0018 wrapped 0011's), the
-- access-log hint (0028), and the logs' defaults.
CREATE OR REPLACE FUNCTION ferry.sync_before_insert() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    NEW.revision := 1;
    NEW.last_modified := ferry.now_ms();
    NEW._ferry_xid := ferry.stamp();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := '{}'::jsonb;
    NEW.is_deleted := coalesce(NEW.is_deleted, false);
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION ferry.sync_before_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('the id of a synced row cannot change (%s)', TG_RELID::regclass);
    END IF;
    NEW.revision := OLD.revision + 1;
    NEW.last_modified := greatest(ferry.now_ms(), OLD.last_modified + 1);
    NEW._ferry_xid := ferry.stamp();
    NEW._ferry_writer := ferry.current_user_id();
    NEW._ferry_field_revisions := OLD._ferry_field_revisions
        || ferry.changed_fields(to_jsonb(NEW), to_jsonb(OLD), NEW.revision);
    RETURN NEW;
END
$$;

ALTER FUNCTION ferry.sync_update_source(pg_catalog.regclass) RENAME TO sync_update_source_0018;
CREATE FUNCTION ferry.sync_update_source(p_table pg_catalog.regclass) RETURNS pg_catalog.text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN replace(ferry.sync_update_source_0018(p_table), 'pg_current_xact_id()', 'ferry.stamp()');

ALTER FUNCTION ferry.sync_notify_source(pg_catalog.regclass) RENAME TO sync_notify_source_0028;
CREATE FUNCTION ferry.sync_notify_source(p_table pg_catalog.regclass) RETURNS pg_catalog.text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN replace(ferry.sync_notify_source_0028(p_table), 'pg_current_xact_id()', 'ferry.stamp()');
REVOKE EXECUTE ON FUNCTION ferry.sync_update_source_0018(pg_catalog.regclass), ferry.sync_update_source(pg_catalog.regclass),
                           ferry.sync_notify_source_0028(pg_catalog.regclass), ferry.sync_notify_source(pg_catalog.regclass)
  FROM PUBLIC;

CREATE OR REPLACE FUNCTION ferry.access_log_notify() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.hint(ferry.stamp()::text || ' 0 u ' || u.user_id::text)
       FROM (SELECT DISTINCT n.user_id FROM new_rows n) u;
    RETURN NULL;
END
$$;

ALTER TABLE ferry.access_grants ALTER COLUMN xid SET DEFAULT ferry.stamp();
ALTER TABLE ferry.access_revocations ALTER COLUMN xid SET DEFAULT ferry.stamp();
ALTER TABLE ferry.public_grants ALTER COLUMN xid SET DEFAULT ferry.stamp();
ALTER TABLE ferry.public_revocations ALTER COLUMN xid SET DEFAULT ferry.stamp();

SELECT ferry.refresh_sync_triggers();
