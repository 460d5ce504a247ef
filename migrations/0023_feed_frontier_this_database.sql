-- The changes feed's frontier (docs/changes-feed.md, "Order from commit
-- visibility"), from the caller's own snapshot, waiting only for the
-- transactions that may still commit rows of this database (issue 47).
--
-- Until now the frontier was pg_snapshot_xmin: the oldest transaction that
-- runs anywhere in the cluster, so a write in another database of the same
-- cluster (another app, a batch job, a session idle in a transaction there)
-- held every device of every user back for as long as it ran. Here it is the
-- oldest xid of the snapshot's running set (pg_snapshot_xip) that is not
-- positively known to belong to another database, else the snapshot's xmax.
--
-- Why nothing is missed: every xid below the result either had ended when
-- the snapshot was taken (so it is final in the snapshot, as below xmin) or
-- belongs to a transaction of another database, which can write no row of
-- this one (a backend writes only the database it is connected to; shared
-- catalogs are not synced). Knowledge is positive only: an xid is left out
-- only when pg_stat_activity shows it as the xid of a backend connected to
-- another database, or pg_prepared_xacts as a prepared transaction of
-- another database. An xid found nowhere (its transaction ended after the
-- snapshot, and may have committed invisibly to it) still holds the frontier.
-- The association of an xid with its database never changes, so it does not
-- matter when pg_stat_activity's copy was taken within the transaction. The
-- xip set holds top-level xids only; a subtransaction's xid is above its
-- parent's, and rows are stamped with the top-level xid (pg_current_xact_id).
--
-- Any role may call it: PostgreSQL shows every backend's datid and
-- backend_xid to every role (pg_stat_get_activity fills them before its
-- permission check; only the query, state and timings are hidden), and
-- pg_prepared_xacts is open to all. So it needs neither SECURITY DEFINER nor
-- pg_read_all_stats, and runs in the caller's snapshot: STABLE, it sees the
-- snapshot of the statement that calls it, which must be the statement that
-- reads the page (callers put it in a subquery that cannot be pulled up,
-- `OFFSET 0`, or a MATERIALIZED CTE, so that it is evaluated once).
--
-- Cost (PL/pgSQL, so its plan is cached per session): when no transaction
-- Otherwise one read of the backends' shared status (a few microseconds per
-- backend, max_connections of them) and of the prepared transactions.
CREATE FUNCTION ferry.feed_frontier() RETURNS xid8
    LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
AS $$
DECLARE
    s pg_catalog.pg_snapshot := pg_catalog.pg_current_snapshot();
BEGIN
    IF pg_catalog.pg_snapshot_xmin(s) = pg_catalog.pg_snapshot_xmax(s) THEN
        RETURN pg_catalog.pg_snapshot_xmax(s);  -- no transaction with an xid runs
    END IF;
    RETURN coalesce(
             (SELECT min(x) FROM pg_catalog.pg_snapshot_xip(s) x
               WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_get_activity(NULL) a
                                  WHERE a.backend_xid = x::xid AND a.datid <> d.oid)
                 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_prepared_xact() p
                                  WHERE p.transaction = x::xid AND p.dbid <> d.oid)),
             pg_catalog.pg_snapshot_xmax(s))
      FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database();
END
$$;

GRANT EXECUTE ON FUNCTION ferry.feed_frontier() TO PUBLIC;
