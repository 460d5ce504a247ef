import FerryPostgres

/// Transaction ids the database holds that its cluster has not had yet
/// (`ferry.ids_ahead_of_cluster()`, migrations/functions/feed.sql): a logical
/// dump of another cluster, restored here. The feed orders by these ids, so
/// every write is then stamped from the floor above the feed's frontier, and
/// no device sees anything new until the cluster has used as many ids. Found
/// by no catalog check: only the values say it. One finding per place that
/// holds such an id.
enum ForeignTransactionIDs {
    static func findings(connection: PostgresConnection) throws(PostgresError) -> [SchemaFinding] {
        let rows: PostgresResult
        do {
            rows = try connection.query("SELECT object, id, next_xid FROM ferry.ids_ahead_of_cluster()")
        } catch {
            // A database whose functions are older than this binary: `ferry migrate` brings the check.
            if error.sqlState == "42883" { return [] }
            throw error
        }
        return rows.rows.map { row in
            let object = row["object"] ?? "?"
            let id = row["id"] ?? "?"
            let next = row["next_xid"] ?? "?"
            let what =
                object.hasPrefix("ferry.")
                ? "so the feed stamps every write above its frontier"
                : "so its rows stamped so far lie above the feed's frontier"
            return SchemaFinding(
                .error, "ids_from_another_cluster", object,
                "holds transaction id \(id), past this cluster's next one (\(next)): the database was restored from another "
                    + "cluster's dump, \(what), and no device sees those writes until the cluster has used as many ids",
                fix: "restore the dump into a new cluster whose transaction id epoch is set past the source's before it first "
                    + "starts (pg_resetwal -e, deploy/README.md \"Back up\"), then expire every cursor "
                    + "(UPDATE ferry.purge_horizon SET horizon_xid = pg_current_xact_id())")
        }
    }
}
