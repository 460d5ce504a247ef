import GRDB

/// A revoked entry of the default stream for a row an active subscription
/// holds (issue 46, seed 1791): a collaborator removed from a public set they
/// also subscribed to. The default stream's revocation says only that the
/// owner and membership rules no longer reach the row; the subscription may
/// still (the set is public). And the subscription's own stream may never say
/// so again: a subscription downloaded from the start after the revocation
/// (before the default stream, as the queue goes first) holds a cursor past
/// it, and a stream from the start reads no revocations. Removed here, the row
/// would be gone for good although the subscription covers it.
///
/// So the row stays, no longer the default stream's, and each active
/// subscription holding it downloads again from the start (queued, its rows
/// unconfirmed): what its stream still reads is confirmed, and what it no
/// longer reads (access that came another way, such as a class, and ended)
/// leaves at that download's end (``sweepRestart(_:stream:id:)``). A
/// revocation is rare; a restart costs one stream's pages.
extension FerryStore {
    /// `changes` without the revoked entries of rows an active subscription holds,
    /// those subscriptions queued to download again.
    static func sparingSubscribed(
        _ db: Database, _ changes: [(resource: String, data: RowData)]
    ) throws -> [(resource: String, data: RowData)] {
        guard changes.contains(where: { $0.data["revoked"]?.bool == true }),
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_subscription_row WHERE stream <> '')")) == true
        else { return changes }
        let holders = try db.cachedStatement(
            sql: """
                SELECT r.stream, r.key FROM ferry_subscription_row r
                  JOIN ferry_subscription s ON s.stream = r.stream AND s.key = r.key
                 WHERE r.resource = ? AND r.id = ? AND r.stream <> '' AND s.unsubscribed_at IS NULL
                """)
        let leaveDefault = try db.cachedStatement(
            sql: "DELETE FROM ferry_subscription_row WHERE stream = '' AND key = '' AND resource = ? AND id = ?")
        var restart: [String: (stream: String, id: String)] = [:]
        var kept: [(resource: String, data: RowData)] = []
        for change in changes {
            guard change.data["revoked"]?.bool == true, let id = rowID(change.data) else {
                kept.append(change)
                continue
            }
            let held = try GRDB.Row.fetchAll(holders, arguments: [change.resource, id])
            guard !held.isEmpty else {
                kept.append(change)
                continue
            }
            try leaveDefault.execute(arguments: [change.resource, id])
            for row in held {
                let (stream, key): (String, String) = (row["stream"], row["key"])
                restart[stream + ":" + key] = (stream, key)
            }
        }
        for (stream, id) in restart.values {
            try restartSubscription(db, stream: stream, id: id)
            try db.execute(sql: "UPDATE ferry_subscription SET status = 'queued' WHERE stream = ? AND key = ?", arguments: [stream, id])
        }
        return kept
    }
}
