-- What holds the changes feed back now, for /metrics and /readyz (issue 47,
-- item 5): the transaction whose xid is the feed's frontier
-- (ferry.feed_frontier(), 0023), when the frontier is below the snapshot's
-- xmax; no row when nothing holds it. Kinds, the most actionable first:
--   prepared             a prepared transaction of this database (COMMIT PREPARED or ROLLBACK PREPARED ends it)
--   idle_in_transaction  its session waits for its client inside the transaction
--   synced_writer        it holds RowExclusiveLock on a synced table: its rows may be in the feed
--   unsynced_writer      it has an xid but has written no synced table (so far)
--   ended                it ended between the snapshot and the look (gone at the next)
-- Transactions of other databases and read-only ones never hold it (0023).
--
-- SECURITY DEFINER, owned by the migration owner, so that it sees what the
-- owner sees of other roles' sessions: PostgreSQL hides their state and
-- xact_start unless the viewer is a member of their role or of
-- pg_read_all_stats. Grant the owner pg_read_all_stats (docs/OPERATIONS.md)
-- for the kind idle_in_transaction and the hold's start on every session;
-- without it, a session of another role is told apart by its locks only,
-- and held_ms is NULL (Ferry then counts from when it first saw the xid).
CREATE FUNCTION ferry.feed_hold() RETURNS TABLE (xid text, kind text, held_ms bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_frontier xid8 := ferry.feed_frontier();
BEGIN
    IF v_frontier >= pg_snapshot_xmax(pg_current_snapshot()) THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT v_frontier::text,
               CASE WHEN p.transaction IS NOT NULL THEN 'prepared'
                    WHEN a.pid IS NULL THEN 'ended'
                    WHEN a.state LIKE 'idle in transaction%' THEN 'idle_in_transaction'
                    WHEN EXISTS (SELECT 1 FROM pg_locks l JOIN ferry.synced_tables t ON t.table_oid = l.relation
                                  WHERE l.pid = a.pid AND l.locktype = 'relation' AND l.granted
                                    AND l.mode = 'RowExclusiveLock') THEN 'synced_writer'
                    ELSE 'unsynced_writer' END,
               floor(extract(epoch FROM clock_timestamp() - coalesce(a.xact_start, p.prepared)) * 1000)::bigint
          FROM (SELECT 1) one
          LEFT JOIN pg_stat_activity a ON a.backend_xid = v_frontier::xid
          LEFT JOIN pg_prepared_xacts p ON p.transaction = v_frontier::xid AND p.database = current_database()
         LIMIT 1;
END
$$;

REVOKE EXECUTE ON FUNCTION ferry.feed_hold() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.feed_hold() TO ferry_app;
