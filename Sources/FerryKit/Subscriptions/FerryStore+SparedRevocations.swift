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
    /// those subscriptions queued to download again (``SubscriptionRules/spare(revoked:held:all:)``
    /// decides, on the same cases as FerryWeb: clients/conformance/subscriptions.json).
    static func sparingSubscribed(
        _ db: Database, _ changes: [(resource: String, data: RowData)]
    ) throws -> [(resource: String, data: RowData)] {
        guard changes.contains(where: { $0.data["revoked"]?.bool == true }),
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_subscription_row WHERE stream <> '')")) == true
        else { return changes }
        let holders = try db.cachedStatement(
            sql: "SELECT stream, key FROM ferry_subscription_row WHERE resource = ? AND id = ? AND stream <> ''")
        var revoked = Set<RowKey>(), held: [String: Set<RowKey>] = [:], named: [String: (stream: String, id: String)] = [:]
        for change in changes where change.data["revoked"]?.bool == true {
            guard let id = rowID(change.data) else { continue }
            let row = RowKey(resource: change.resource, id: id)
            revoked.insert(row)
            for holder in try GRDB.Row.fetchAll(holders, arguments: [change.resource, id]) {
                let (stream, key): (String, String) = (holder["stream"], holder["key"])
                held[stream + ":" + key, default: []].insert(row)
                named[stream + ":" + key] = (stream, key)
            }
        }
        let all = try allSubscriptions(db)
        let spared = SubscriptionRules.spare(revoked: revoked, held: held, all: all)
        guard !spared.rows.isEmpty else { return changes }
        let leaveDefault = try db.cachedStatement(
            sql: "DELETE FROM ferry_subscription_row WHERE stream = '' AND key = '' AND resource = ? AND id = ?")
        for row in spared.rows { try leaveDefault.execute(arguments: [row.resource, row.id]) }
        for key in spared.restart {
            guard let subscription = named[key] else { continue }
            try restartSubscription(db, stream: subscription.stream, id: subscription.id)
            try setSubscriptionStatus(db, stream: subscription.stream, id: subscription.id, "queued")
        }
        let keep = Set(spared.rows)
        return changes.filter { change in
            guard change.data["revoked"]?.bool == true, let id = rowID(change.data) else { return true }
            return !keep.contains(RowKey(resource: change.resource, id: id))
        }
    }
}
