import Foundation
import GRDB

/// Subscriptions in the store: `ferry_subscription` (one row each: its
/// priority, TTL, place in the queue, status and cursor) and
/// `ferry_subscription_row` (which rows each one brought, and, under the
/// stream name `''`, which of those rows the default stream holds too), so
/// that an evicted stream removes exactly the rows nothing else covers.
///
/// A stream page, its rows' sources and its cursor are written in one
/// transaction, as a page of the default feed is with its cursor.
extension FerryStore {
    /// A subscription as the queue, the waits and an eviction see it (``SubscriptionRules``).
    struct SubscriptionRecord: Equatable, Sendable {
        var stream: String
        var id: String
        var priority: SubscriptionPriority
        /// When it was last subscribed to, in the store's own count (higher: later).
        var opened: Int
        /// queued, syncing, synced or refused.
        var status: String
        var cursor: String?
        /// Seconds its rows stay after `unsubscribedAt`.
        var ttl: TimeInterval = SubscriptionTTL.default.seconds
        /// When it was unsubscribed (seconds since 1970); nil while active.
        var unsubscribedAt: TimeInterval?

        /// Its name in a wait and in ``SubscriptionRules``: `stream:id`.
        var key: String { stream + ":" + id }
    }

    /// The stream name under which `ferry_subscription_row` marks rows the default stream holds.
    static let defaultSource = ""

    /// Subscribes (or subscribes again): active, at the head of its priority.
    /// A subscription that was not synced and active (new, unsubscribed,
    /// refused) is queued; its cursor, if it has one, is kept, so a warm cache
    /// only catches up.
    func subscribe(stream: String, id: String, ttl: SubscriptionTTL, priority: SubscriptionPriority) throws {
        try ferryWrite { db in
            let opened = (try Int.fetchOne(db, sql: "SELECT max(opened) FROM ferry_subscription") ?? 0) + 1
            try db.execute(
                sql: """
                    INSERT INTO ferry_subscription (stream, key, priority, ttl, opened, status, unsubscribed_at)
                    VALUES (?, ?, ?, ?, ?, 'queued', NULL)
                    ON CONFLICT (stream, key) DO UPDATE SET
                      priority = excluded.priority, ttl = excluded.ttl, opened = excluded.opened, problem = NULL,
                      status = CASE WHEN ferry_subscription.status = 'synced' AND ferry_subscription.unsubscribed_at IS NULL
                                    THEN 'synced' ELSE 'queued' END,
                      unsubscribed_at = NULL
                    """, arguments: [stream, id, priority.rawValue, ttl.seconds, opened])
        }
    }

    /// Unsubscribes: out of the queue at once, its rows kept until `at` plus its TTL.
    func unsubscribe(stream: String, id: String, at now: Date) throws {
        try ferryWrite { db in
            try db.execute(
                sql: """
                    UPDATE ferry_subscription SET unsubscribed_at = ?,
                      status = CASE status WHEN 'syncing' THEN 'queued' ELSE status END
                    WHERE stream = ? AND key = ? AND unsubscribed_at IS NULL
                    """, arguments: [now.timeIntervalSince1970, stream, id])
        }
    }

    /// Whether a subscription's stream brought row `id` of `resource` (not the default stream alone).
    func heldBySubscription(_ resource: String, id: String) throws -> Bool {
        try database.read { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM ferry_subscription_row WHERE resource = ? AND id = ? AND stream <> '')",
                arguments: [resource, id]) ?? false
        }
    }

    /// Every subscription the store holds, unsubscribed ones in their TTL included.
    func subscriptionKeys() throws -> [(stream: String, id: String)] {
        try database.read { db in
            try GRDB.Row.fetchAll(db, sql: "SELECT stream, key FROM ferry_subscription ORDER BY opened DESC").map { ($0["stream"], $0["key"]) }
        }
    }

    /// The download queue, head first: active subscriptions that have not
    /// synced yet, by priority, the most recently opened first.
    func subscriptionQueue() throws -> [SubscriptionRecord] {
        SubscriptionRules.queue(try allSubscriptions())
    }

    /// Active subscriptions that have synced once: followed after the default stream.
    func syncedSubscriptions() throws -> [SubscriptionRecord] {
        SubscriptionRules.synced(try allSubscriptions())
    }

    /// Every subscription, unsubscribed ones in their TTL included, in no order: what ``SubscriptionRules`` decides on.
    func allSubscriptions() throws -> [SubscriptionRecord] {
        try database.read { db in try Self.allSubscriptions(db) }
    }

    static func allSubscriptions(_ db: Database) throws -> [SubscriptionRecord] {
        try GRDB.Row.fetchAll(
            db, sql: "SELECT stream, key, priority, opened, status, cursor, ttl, unsubscribed_at FROM ferry_subscription"
        ).map {
            SubscriptionRecord(
                stream: $0["stream"], id: $0["key"], priority: SubscriptionPriority(rawValue: $0["priority"]) ?? .normal,
                opened: $0["opened"], status: $0["status"], cursor: $0["cursor"], ttl: $0["ttl"], unsubscribedAt: $0["unsubscribed_at"])
        }
    }

    /// Sets a subscription's status (queued, syncing, synced), unless it was dropped meanwhile.
    func setSubscriptionStatus(stream: String, id: String, _ status: String, problem: String? = nil) throws {
        try ferryWrite { db in try Self.setSubscriptionStatus(db, stream: stream, id: id, status, problem: problem) }
    }

    static func setSubscriptionStatus(_ db: Database, stream: String, id: String, _ status: String, problem: String? = nil) throws {
        try db.execute(
            sql: "UPDATE ferry_subscription SET status = ?, problem = ? WHERE stream = ? AND key = ? AND unsubscribed_at IS NULL",
            arguments: [status, problem, stream, id])
    }

    /// The stream's cursor expired on the server: it starts again from the
    /// beginning. Its rows stay readable, listed as unconfirmed: each page of the
    /// new download confirms what it brings, and what is left at the stream's end
    /// leaves (``sweepRestart(_:stream:id:)``). A restart cut short and started
    /// again lists every row of the stream again (those the pages brought are
    /// among them, and are brought again).
    func restartSubscription(stream: String, id: String) throws {
        try ferryWrite { db in try Self.restartSubscription(db, stream: stream, id: id) }
    }

    static func restartSubscription(_ db: Database, stream: String, id: String) throws {
        try db.execute(sql: "UPDATE ferry_subscription SET cursor = NULL WHERE stream = ? AND key = ?", arguments: [stream, id])
        try db.execute(sql: "DELETE FROM ferry_stream_unconfirmed WHERE stream = ? AND key = ?", arguments: [stream, id])
        try db.execute(
            sql: """
                INSERT INTO ferry_stream_unconfirmed (stream, key, resource, id)
                SELECT stream, key, resource, id FROM ferry_subscription_row WHERE stream = ? AND key = ?
                """, arguments: [stream, id])
    }

    /// The end of a restarted stream's download: its rows that no page brought
    /// again (``RestartSweep``). One another source holds (another subscription,
    /// the default stream) stays and leaves this stream's list; one with edits
    /// waiting stays the stream's; the rest leaves the store with a `removed` event.
    static func sweepRestart(_ db: Database, stream: String, id: String) throws -> [SyncEvent] {
        let unconfirmed = try GRDB.Row.fetchAll(
            db, sql: "SELECT resource, id FROM ferry_stream_unconfirmed WHERE stream = ? AND key = ?", arguments: [stream, id])
        guard !unconfirmed.isEmpty else { return [] }
        let others = try db.cachedStatement(
            sql: "SELECT EXISTS (SELECT 1 FROM ferry_subscription_row WHERE resource = ? AND id = ? AND NOT (stream = ? AND key = ?))")
        let keys = unconfirmed.map { RowKey(resource: $0["resource"], id: $0["id"]) }
        let (decision, events) = try Self.sweepUnconfirmed(db, keys) { key in
            try Bool.fetchOne(others, arguments: [key.resource, key.id, stream, id]) == true
        }
        let release = try db.cachedStatement(sql: "DELETE FROM ferry_subscription_row WHERE stream = ? AND key = ? AND resource = ? AND id = ?")
        for key in Set(keys).subtracting(decision.keep) { try release.execute(arguments: [stream, id, key.resource, key.id]) }
        try db.execute(sql: "DELETE FROM ferry_stream_unconfirmed WHERE stream = ? AND key = ?", arguments: [stream, id])
        return events
    }

    /// Applies one page of a stream with its cursor, in one transaction; the
    /// rows it brought are recorded as the subscription's, and `synced`
    /// (the stream's end reached) marks it synced. A page for a subscription
    /// dropped meanwhile still applies (its rows are current), and stays
    /// recorded for its eviction. A page for one evicted meanwhile (an
    /// eviction runs while a continuous mode's wait downloads) is dropped:
    /// its rows would be held by a subscription that no longer exists.
    func applyStreamPage(
        _ changes: [(resource: String, data: RowData)], stream: String, id: String, cursor: String, synced: Bool,
        resolve: @Sendable (String) -> ThreeWayMerge.Resolver?
    ) throws -> [SyncEvent] {
        try ferryWrite { db in
            let exists = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM ferry_subscription WHERE stream = ? AND key = ?)", arguments: [stream, id])
            guard exists == true else { return [] }
            // Per resource, once a page: whether the store has its table, and the
            // statements that record a row's source if the row is there. Reading each
            // row back (decoded) to learn that it exists was most of a page's own work.
            let sources = try SourceStatements(db, resources: Set(changes.map(\.resource)))
            // Rows the store held from the default stream (no source recorded:
            // brought before any subscription, or created here) stay the default's.
            for change in changes {
                guard let mark = sources.markDefault[change.resource], let rowID = Self.rowID(change.data) else { continue }
                try mark.execute(arguments: [change.resource, rowID, rowID, change.resource, rowID])
            }
            var events = try Self.applyRemote(db, changes, resolve: resolve)
            // After a restart (410): what this page brings is confirmed.
            let restarting =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM ferry_stream_unconfirmed WHERE stream = ? AND key = ?)", arguments: [stream, id])
                == true
            if restarting {
                let confirm = try db.cachedStatement(
                    sql: "DELETE FROM ferry_stream_unconfirmed WHERE stream = ? AND key = ? AND resource = ? AND id = ?")
                for change in changes {
                    guard let rowID = Self.rowID(change.data) else { continue }
                    try confirm.execute(arguments: [stream, id, change.resource, rowID])
                }
            }
            for change in changes {
                // A revoked or deleted row was removed with its sources: the statement records only a row the store holds.
                guard let record = sources.record[change.resource], let rowID = Self.rowID(change.data) else { continue }
                try record.execute(arguments: [stream, id, change.resource, rowID, rowID])
            }
            try db.execute(
                sql: """
                    UPDATE ferry_subscription SET cursor = ?,
                      status = CASE WHEN ? AND unsubscribed_at IS NULL THEN 'synced' ELSE status END
                    WHERE stream = ? AND key = ?
                    """, arguments: [cursor, synced, stream, id])
            // The stream's end, with its cursor: what no page brought again leaves.
            if restarting && synced { events += try Self.sweepRestart(db, stream: stream, id: id) }
            return events
        }
    }

    static func rowID(_ data: RowData) -> String? { data["id"]?.string ?? data["id"]?.int.map(String.init) }

    /// A stream page's statements for its rows' sources, one of each per
    /// resource whose table the store has; each inserts only when the
    /// resource's table holds the row (a revoked or deleted one is gone).
    struct SourceStatements {
        /// Marks a row the store already holds, with no source recorded, as the
        /// default stream's. Arguments: resource, id, id, resource, id.
        var markDefault: [String: Statement] = [:]
        /// Records a row as the stream's. Arguments: stream, key, resource, id, id.
        var record: [String: Statement] = [:]

        init(_ db: Database, resources: Set<String>) throws {
            for resource in resources where try db.tableExists(resource) {
                let table = LocalSchema.quote(resource)
                markDefault[resource] = try db.cachedStatement(
                    sql: """
                        INSERT OR IGNORE INTO ferry_subscription_row (stream, key, resource, id) SELECT '', '', ?, ?
                        WHERE EXISTS (SELECT 1 FROM \(table) WHERE id = ?)
                          AND NOT EXISTS (SELECT 1 FROM ferry_subscription_row WHERE resource = ? AND id = ?)
                        """)
                record[resource] = try db.cachedStatement(
                    sql: """
                        INSERT OR IGNORE INTO ferry_subscription_row (stream, key, resource, id) SELECT ?, ?, ?, ?
                        WHERE EXISTS (SELECT 1 FROM \(table) WHERE id = ?)
                        """)
            }
        }
    }

    /// A page of the default stream (feed or initial sync) holds these rows:
    /// those a subscription brought too are marked the default's, so that
    /// its eviction keeps them. One look when no subscription brought anything.
    static func markDefault(_ db: Database, _ changes: [(resource: String, data: RowData)]) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_subscription_row)")) == true else { return }
        let mark = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO ferry_subscription_row (stream, key, resource, id) SELECT '', '', ?, ?
                WHERE EXISTS (SELECT 1 FROM ferry_subscription_row WHERE resource = ? AND id = ?)
                """)
        for change in changes {
            guard let id = rowID(change.data), change.data["revoked"]?.bool != true, change.data["is_deleted"]?.bool != true else { continue }
            try mark.execute(arguments: [change.resource, id, change.resource, id])
        }
    }

    /// Unsubscribed streams whose TTL has passed leave: each row of theirs
    /// that no other subscription (in its TTL or active) and not the default
    /// stream holds is removed, unless it has edits waiting for upload; those
    /// stay, recorded, and leave with a later eviction, once their edits are
    /// uploaded or refused. One ``SyncEvent/evicted(stream:id:removed:keptForEdits:)``
    /// per stream that removed rows or ended.
    func evictExpired(now: Date) throws -> [SyncEvent] {
        try ferryWrite { db in
            let due = SubscriptionRules.due(try Self.allSubscriptions(db), now: now)
            guard !due.isEmpty else { return [] }
            // The facts the rules decide on: every source of each row a due stream
            // brought, whether the store holds the row, and whether edits of it wait.
            var held: [String: Set<RowKey>] = [:]
            var (heldByDefault, exists, pending, seen) = (Set<RowKey>(), Set<RowKey>(), Set<RowKey>(), Set<RowKey>())
            let rowsOf = try db.cachedStatement(sql: "SELECT resource, id FROM ferry_subscription_row WHERE stream = ? AND key = ?")
            let sourcesOf = try db.cachedStatement(sql: "SELECT stream, key FROM ferry_subscription_row WHERE resource = ? AND id = ?")
            for subscription in due {
                for row in try GRDB.Row.fetchAll(rowsOf, arguments: [subscription.stream, subscription.id]) {
                    let key = RowKey(resource: row["resource"], id: row["id"])
                    guard seen.insert(key).inserted else { continue }
                    for source in try GRDB.Row.fetchAll(sourcesOf, arguments: [key.resource, key.id]) {
                        let (stream, id): (String, String) = (source["stream"], source["key"])
                        if stream == Self.defaultSource {
                            heldByDefault.insert(key)
                        } else {
                            held[stream + ":" + id, default: []].insert(key)
                        }
                    }
                    if try db.tableExists(key.resource), try Self.row(db, key.resource, id: key.id) != nil {
                        exists.insert(key)
                        if try Self.hasPending(db, key.resource, id: key.id) { pending.insert(key) }
                    }
                }
            }
            let decision = SubscriptionRules.evict(
                due: due.map(\.key), held: held, heldByDefault: heldByDefault, pending: pending, exists: exists)
            for row in decision.remove { try Self.remove(db, row.resource, id: row.id) }
            for subscription in due {
                // Its rows leave its list, but those kept for their edits.
                try db.execute(
                    sql: "DELETE FROM ferry_subscription_row WHERE stream = ? AND key = ?", arguments: [subscription.stream, subscription.id])
                if let kept = decision.kept[subscription.key] {
                    for row in kept {
                        try db.execute(
                            sql: "INSERT INTO ferry_subscription_row (stream, key, resource, id) VALUES (?, ?, ?, ?)",
                            arguments: [subscription.stream, subscription.id, row.resource, row.id])
                    }
                } else {
                    try db.execute(
                        sql: "DELETE FROM ferry_subscription WHERE stream = ? AND key = ?", arguments: [subscription.stream, subscription.id])
                    try db.execute(
                        sql: "DELETE FROM ferry_stream_unconfirmed WHERE stream = ? AND key = ?", arguments: [subscription.stream, subscription.id])
                }
            }
            let byKey = Dictionary(due.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
            return decision.outcomes.compactMap { outcome in
                byKey[outcome.key].map {
                    SyncEvent.evicted(stream: $0.stream, id: $0.id, removed: outcome.removed, keptForEdits: outcome.keptForEdits)
                }
            }
        }
    }

    /// The state ``StreamSubscription/state()`` reports.
    static func subscriptionState(_ db: Database, stream: String, id: String) throws -> SubscriptionState {
        guard
            let row = try GRDB.Row.fetchOne(
                db, sql: "SELECT status, problem, ttl, unsubscribed_at FROM ferry_subscription WHERE stream = ? AND key = ?",
                arguments: [stream, id])
        else { return .none }
        if let at: Double = row["unsubscribed_at"] {
            let ttl: Double = row["ttl"]
            return .unsubscribed(evictsAt: Date(timeIntervalSince1970: at + ttl))
        }
        switch row["status"] as String {
        case "syncing": return .syncing
        case "synced": return .synced
        case "refused": return .refused(row["problem"] ?? "refused")
        default: return .queued
        }
    }

    /// The tables, in the store's migrator ("ferry 5").
    static let subscriptionTables = """
        CREATE TABLE ferry_subscription (stream TEXT NOT NULL, key TEXT NOT NULL, priority INTEGER NOT NULL, ttl REAL NOT NULL,
                                         opened INTEGER NOT NULL, status TEXT NOT NULL, problem TEXT, cursor TEXT,
                                         unsubscribed_at REAL, PRIMARY KEY (stream, key));
        CREATE TABLE ferry_subscription_row (stream TEXT NOT NULL, key TEXT NOT NULL, resource TEXT NOT NULL, id TEXT NOT NULL,
                                             PRIMARY KEY (resource, id, stream, key));
        CREATE INDEX ferry_subscription_row_stream ON ferry_subscription_row (stream, key);
        """

    /// The table of a restarted stream's unconfirmed rows, in the store's migrator ("ferry 6").
    static let streamUnconfirmedTable = """
        CREATE TABLE ferry_stream_unconfirmed (stream TEXT NOT NULL, key TEXT NOT NULL, resource TEXT NOT NULL, id TEXT NOT NULL,
                                               PRIMARY KEY (stream, key, resource, id));
        """
}
