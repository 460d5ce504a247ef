import Foundation
import GRDB

/// What the outbox says about progress: so that a queue that does not move
/// shows in ``SyncStatus`` and in ``FerryStore/outbox()``, never only in a log.
extension FerryStore {
    /// One operation waiting in the outbox (or refused), for an app's "waiting
    /// to sync" screen.
    public struct OutboxEntry: Sendable, Equatable {
        public let resource: String
        public let rowID: String
        /// `create`, `update` or `delete`.
        public let kind: String
        public let state: OutboxState
        /// How many times it has been sent without an answer that settled it.
        public let attempts: Int
        /// The last failure: the server's problem+json, or
        /// `{"code":"transport_failure","detail":...}` when no answer came.
        public let lastError: String?
        /// When the engine next expects the server to take it (after a 5xx, 429 or no answer).
        public let nextAttempt: Date?
        /// When the app made the write (nil for writes made before FerryKit recorded it).
        public let createdAt: Date?
    }

    /// Every operation in the outbox, oldest first.
    public func outbox() throws -> [OutboxEntry] {
        try database.read { db in
            try GRDB.Row.fetchAll(
                db,
                sql: """
                    SELECT resource, row_id, kind, state, attempts, last_error, next_attempt_at, created_at
                      FROM ferry_outbox ORDER BY sequence
                    """
            ).map { record in
                OutboxEntry(
                    resource: record["resource"], rowID: record["row_id"], kind: record["kind"],
                    state: OutboxState(rawValue: record["state"]) ?? .pending,
                    attempts: record["attempts"], lastError: record["last_error"],
                    nextAttempt: (record["next_attempt_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
                    createdAt: (record["created_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
            }
        }
    }

    struct OutboxSummary: Equatable {
        var pending = 0
        var rejected = 0
        var oldestPending: Date?
        var stalled = 0
    }

    /// Counts for the status line, in one query: `stalled` counts the waiting
    /// operations sent `stalledAfter` times or more without being settled.
    func outboxSummary(stalledAfter: Int) throws -> OutboxSummary {
        try database.read { db in
            guard
                let record = try GRDB.Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT count(*) FILTER (WHERE \(OutboxState.waiting())) AS pending,
                                   count(*) FILTER (WHERE \(OutboxState.isRejected())) AS rejected,
                                   min(created_at) FILTER (WHERE \(OutboxState.waiting())) AS oldest,
                                   count(*) FILTER (WHERE \(OutboxState.waiting()) AND attempts >= ?) AS stalled
                              FROM ferry_outbox
                            """), arguments: [stalledAfter])
            else { return OutboxSummary() }
            return OutboxSummary(
                pending: record["pending"], rejected: record["rejected"],
                oldestPending: (record["oldest"] as Double?).map(Date.init(timeIntervalSince1970:)),
                stalled: record["stalled"])
        }
    }

    /// The rows among `opIDs` whose operations have now been sent exactly
    /// `attempts` times: each crosses the stall threshold once, and is told once.
    func reachedAttempts(_ opIDs: [UUID], _ attempts: Int) throws -> [(resource: String, id: String, lastError: String?)] {
        try database.read { db in
            var rows: [(String, String, String?)] = []
            var seen = Set<RowKey>()
            for id in opIDs {
                guard
                    let record = try GRDB.Row.fetchOne(
                        db.cachedStatement(
                            sql: """
                                SELECT resource, row_id, last_error FROM ferry_outbox WHERE op_id = ? AND attempts = ? AND \(OutboxState.waiting())
                                """), arguments: [id.uuidString.lowercased(), attempts])
                else { continue }
                let key = RowKey(resource: record["resource"], id: record["row_id"])
                if seen.insert(key).inserted { rows.append((key.resource, key.id, record["last_error"])) }
            }
            return rows
        }
    }
}
