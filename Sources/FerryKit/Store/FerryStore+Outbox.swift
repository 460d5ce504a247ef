import Foundation
import GRDB

/// The outbox side of the store: what is pending, and what an answer does to it.
extension FerryStore {
    /// A row's sync state, derived from its pending operations.
    public enum RowState: String, Sendable, Equatable {
        /// Nothing pending.
        case synced
        /// Local edits wait for upload.
        case dirty
        /// Local edits wait for upload, merged with a server change to the same
        /// fields (``SyncEvent/conflict(resource:id:conflicts:)`` said how); the
        /// row is ``synced`` once the merged version is uploaded.
        case conflict
        /// An upload of its edits is in flight.
        case syncing
        /// The server refused an operation on it for good (see ``SyncEvent/rejected(_:)``).
        case rejected
    }

    /// How many operations wait for upload (rejected ones not included).
    public func pendingCount() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_outbox WHERE \(OutboxState.waiting())") ?? 0 }
    }

    /// How many operations the server refused for good and the app has not cleared.
    public func rejectedCount() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_outbox WHERE \(OutboxState.isRejected())") ?? 0 }
    }

    /// Row `id`'s sync state; `.synced` when the outbox holds nothing for it (also for an unknown row).
    public func state(_ resource: String, id: String) throws -> RowState {
        try database.read { db in
            let states = try String.fetchAll(
                db, sql: "SELECT state FROM ferry_outbox WHERE resource = ? AND row_id = ?",
                arguments: [resource, id]
            ).compactMap(OutboxState.init(rawValue:))
            return RowState(operations: states, conflicted: try Self.hasConflict(db, resource, id: id))
        }
    }

    /// Forgets the rejected operations (after the app has shown them).
    public func clearRejected() throws {
        try ferryWrite { db in try db.execute(sql: OutboxState.statement(.cleared, where: "true")) }
    }

    /// Signing out: the number of local changes the server has not seen. The
    /// file is deleted only when that is zero or `discardingUnsynced` is true;
    /// otherwise it stays, and the count says what would be lost.
    public static func signOut(path: String, discardingUnsynced: Bool = false) throws -> Int {
        let store = try FerryStore(path: path)
        let unsynced = try store.pendingCount() + store.rejectedCount()
        guard unsynced == 0 || discardingUnsynced else { return unsynced }
        try store.database.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return unsynced
    }

    // MARK: For the engine

    /// The operations to upload, and the current rows and base revisions they need.
    func uploadInput() throws -> (operations: [PendingOperation], rows: [RowKey: RowData], bases: [RowKey: Int64]) {
        try database.read { db in
            let records = try GRDB.Row.fetchAll(
                db,
                sql: """
                    SELECT sequence, op_id, resource, row_id, kind, fields, group_id, attempts FROM ferry_outbox
                     WHERE state = \(OutboxState.pending.sql) ORDER BY sequence
                    """)
            var operations: [PendingOperation] = []
            var rows: [RowKey: RowData] = [:]
            var bases: [RowKey: Int64] = [:]
            for record in records {
                let resource: String = record["resource"], rowID: String = record["row_id"]
                let fields = (try? JSONDecoder().decode([String].self, from: Data((record["fields"] as String).utf8))) ?? []
                guard let kind = PendingOperation.Kind(rawValue: record["kind"]),
                    let opID = UUID(uuidString: record["op_id"])
                else { continue }
                operations.append(
                    PendingOperation(
                        opID: opID, sequence: record["sequence"], resource: resource,
                        rowID: rowID, kind: kind, fields: Set(fields), group: record["group_id"],
                        sent: (record["attempts"] as Int) > 0))
                let key = RowKey(resource: resource, id: rowID)
                if rows[key] == nil, let row = try? Self.row(db, resource, id: rowID) { rows[key] = row }
                if bases[key] == nil, let revision = try Self.base(db, resource, id: rowID)?.revision {
                    bases[key] = revision
                }
            }
            return (operations, rows, bases)
        }
    }

    /// Carries `event` out on the operations `opIDs` (``OutboxState/transition(_:_:)``):
    /// `error` becomes their last error when given, `nextAttempt` their due time.
    func transition(_ opIDs: [UUID], _ event: OutboxState.Event, error: Data? = nil, nextAttempt: Date? = nil) throws {
        try ferryWrite { db in
            let statement = try db.cachedStatement(sql: OutboxState.statement(event, where: "op_id = ?"))
            for id in opIDs {
                try statement.execute(
                    arguments: Self.outcomeArguments(event, error: error, nextAttempt: nextAttempt)
                        + [id.uuidString.lowercased()])
            }
        }
    }

    /// Records `error` as the last error of `opIDs`, whatever their state.
    func noteError(_ opIDs: [UUID], _ error: Data) throws {
        try ferryWrite { db in
            let statement = try db.cachedStatement(sql: "UPDATE ferry_outbox SET last_error = ? WHERE op_id = ?")
            for id in opIDs { try statement.execute(arguments: [String(decoding: error, as: UTF8.self), id.uuidString.lowercased()]) }
        }
    }

    /// ``transition(_:_:error:nextAttempt:)`` for every operation of row `id`.
    static func transition(_ db: Database, row resource: String, id: String, _ event: OutboxState.Event, error: Data?) throws {
        try db.cachedStatement(sql: OutboxState.statement(event, where: "resource = ? AND row_id = ?"))
            .execute(arguments: outcomeArguments(event, error: error, nextAttempt: nil) + [resource, id])
    }

    /// The arguments an event's statement takes before its filter's: none for
    /// a DELETE, the last error and the due time for an UPDATE.
    static func outcomeArguments(_ event: OutboxState.Event, error: Data?, nextAttempt: Date?) -> StatementArguments {
        guard case .becomes = OutboxState.rule(event).outcome else { return [] }
        return [error.map { String(decoding: $0, as: UTF8.self) }, nextAttempt?.timeIntervalSince1970]
    }

    /// The server took `request` and answered `serverRow` (a tombstone for a
    /// delete): in one transaction the row's base becomes the server's version,
    /// the acknowledged operations leave the outbox, and edits made meanwhile
    /// stay pending on top of the new base.
    func acknowledge(_ request: UploadRequest, serverRow: RowData?) throws {
        try acknowledge([(request, serverRow)])
    }

    /// ``acknowledge(_:serverRow:)`` for every item of a bulk answer, in one transaction.
    func acknowledge(_ answers: [(request: UploadRequest, serverRow: RowData?)]) throws {
        try ferryWrite { db in
            for answer in answers { try Self.acknowledge(db, answer.request, serverRow: answer.serverRow) }
        }
    }

    static func acknowledge(_ db: Database, _ request: UploadRequest, serverRow answered: RowData?) throws {
        let table = try Self.resource(db, request.resource)
        // The feed removed the row while the request was out (a revocation
        // racing the upload, or another device's delete): the removal refused
        // the request's operations, and it stands. The answer says what the
        // server did before the removal; putting its row back would show a
        // row this user can no longer read (issue 51).
        guard try anyWaiting(db, request.opIDs) else { return }
        // An answer can be older than what the feed already brought: a replay
        // (Idempotency-Key) of a write whose first answer was lost, stored at
        // the revision it made, while the feed merged a later one meanwhile.
        // That later version already includes this write; it stays.
        var serverRow = answered
        if let answered, let revision = answered["revision"]?.int, answered["is_deleted"]?.bool != true,
            let known = try Self.base(db, request.resource, id: request.rowID), known.revision > revision
        {
            serverRow = known.row
        }
        let settle = try db.cachedStatement(sql: OutboxState.statement(.settled, where: "op_id = ?"))
        for id in request.opIDs { try settle.execute(arguments: [id.uuidString.lowercased()]) }
        guard let serverRow, serverRow["is_deleted"]?.bool != true else {
            try Self.remove(db, request.resource, id: request.rowID)
            return
        }
        // The base is kept only while edits are pending on top of it.
        if try hasPending(db, request.resource, id: request.rowID) {
            try Self.setBase(db, request.resource, serverRow)
        } else {
            try Self.dropBase(db, request.resource, id: request.rowID)
        }
        // The merged version reached the server: the conflict is settled.
        try clearConflict(db, request.resource, id: request.rowID)
        let dirty = try Self.dirtyFields(db, request.resource, id: request.rowID)
        let local = try Self.row(db, request.resource, id: request.rowID)
        var merged = serverRow
        if let local { for field in dirty { merged[field] = local[field] } }
        // Deleted locally meanwhile: the row stays gone until its delete is sent.
        if local != nil || dirty.isEmpty { try Self.put(db, table, merged) }
    }

    static func setBase(_ db: Database, _ resource: String, _ row: RowData) throws {
        guard let id = row["id"].flatMap(\.string) ?? row["id"]?.int.map(String.init), let revision = row["revision"]?.int else { return }
        try db.cachedStatement(
            sql: """
                INSERT INTO ferry_base (resource, id, revision, row) VALUES (?, ?, ?, ?)
                ON CONFLICT (resource, id) DO UPDATE SET revision = excluded.revision, row = excluded.row
                """
        ).execute(arguments: [resource, id, revision, String(decoding: JSONValue.object(row).encoded(), as: UTF8.self)])
    }

    /// The server version local edits of row `id` were made on: the one kept
    /// in `ferry_base` since the first edit, else (no edit pending) the local
    /// row itself, if the server has it. Nil for a row created locally and not
    /// yet acknowledged.
    static func base(_ db: Database, _ resource: String, id: String) throws -> (revision: Int64, row: RowData)? {
        if let record = try GRDB.Row.fetchOne(
            db.cachedStatement(sql: "SELECT revision, row FROM ferry_base WHERE resource = ? AND id = ?"),
            arguments: [resource, id])
        {
            let row = (try? JSONValue.decode(Data((record["row"] as String).utf8)))?.object ?? [:]
            return (record["revision"], row)
        }
        guard let row = try Self.row(db, resource, id: id), let revision = row["revision"]?.int else { return nil }
        return (revision, row)
    }

    static func dropBase(_ db: Database, _ resource: String, id: String) throws {
        try db.cachedStatement(sql: "DELETE FROM ferry_base WHERE resource = ? AND id = ?").execute(arguments: [resource, id])
    }

    /// The fields edited locally and not yet acknowledged; every writable field
    /// for a row created locally.
    static func dirtyFields(_ db: Database, _ resource: String, id: String) throws -> Set<String> {
        let records = try GRDB.Row.fetchAll(
            db,
            sql: """
                SELECT kind, fields FROM ferry_outbox WHERE resource = ? AND row_id = ? AND \(OutboxState.waiting())
                """, arguments: [resource, id])
        var fields = Set<String>()
        for record in records {
            if (record["kind"] as String) == PendingOperation.Kind.create.rawValue {
                fields.formUnion(try Self.resource(db, resource).writableColumns)
            }
            fields.formUnion((try? JSONDecoder().decode([String].self, from: Data((record["fields"] as String).utf8))) ?? [])
        }
        return fields
    }

    /// Whether any of `opIDs` still waits for its answer (pending or in flight,
    /// not rejected and not gone).
    static func anyWaiting(_ db: Database, _ opIDs: [UUID]) throws -> Bool {
        let statement = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_outbox WHERE op_id = ? AND \(OutboxState.waiting()))")
        for id in opIDs where try Bool.fetchOne(statement, arguments: [id.uuidString.lowercased()]) == true { return true }
        return false
    }

    static func hasPending(_ db: Database, _ resource: String, id: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_outbox WHERE resource = ? AND row_id = ? AND \(OutboxState.waiting()))"),
            arguments: [resource, id]) ?? false
    }
}

extension FerryStore {
    /// Operations that need no request (a create later deleted) leave the outbox.
    func discardCancelled(_ operations: [PendingOperation], planned: [UploadRequest]) throws {
        let sent = Set(planned.flatMap(\.opIDs))
        let cancelled = operations.filter { !sent.contains($0.opID) }
        guard !cancelled.isEmpty else { return }
        try transition(cancelled.map(\.opID), .cancelled)
    }

    /// The server already has the row a create meant to make (409 `already_exists`,
    /// another device created the same id): the create becomes an update of every
    /// field the app set.
    func createBecameUpdate(_ request: UploadRequest) throws {
        try ferryWrite { db in
            let fields = try Self.resource(db, request.resource).writableColumns.sorted()
            let encoded = String(decoding: try JSONEncoder().encode(fields), as: UTF8.self)
            for id in request.opIDs {
                try db.execute(
                    sql: "UPDATE ferry_outbox SET kind = 'update', fields = ? WHERE op_id = ? AND kind = 'create'",
                    arguments: [encoded, id.uuidString.lowercased()])
            }
        }
    }

    /// After 410 `cursor_expired`: forget the cursor; the initial sync runs
    /// again. The rows stay readable meanwhile: `beginInitialSync` lists those
    /// without local edits (and not a subscription's) as unconfirmed, the pages
    /// confirm what the server still has, and what is left leaves when it
    /// finishes, with a `removed` event (docs/API.md, "Delta sync"; FerryWeb
    /// does the same). Rows with edits stay, and are re-based as the pages bring
    /// their server versions (or rejected on upload if the server lost them).
    func startOver() throws {
        try ferryWrite { db in
            try db.execute(sql: "DELETE FROM ferry_state WHERE key = 'cursor'")
            try Self.clearInitialSync(db)
            // The default stream starts again (its pages mark what it holds); the
            // subscriptions' rows stay theirs (their own cursors are still valid
            // and would not bring them again).
            try db.execute(sql: "DELETE FROM ferry_subscription_row WHERE stream = ''")
            try db.execute(
                sql:
                    "DELETE FROM ferry_base WHERE NOT EXISTS (SELECT 1 FROM ferry_outbox o WHERE o.resource = ferry_base.resource AND o.row_id = ferry_base.id AND \(OutboxState.waiting("o.state")))"
            )
        }
    }
}

extension FerryStore {
    /// The server refused `request` for good: its operations stay in the outbox
    /// as rejected (for the app to show and clear), and the row goes back to
    /// what the server has: a refused create disappears, a refused edit or
    /// delete returns to the base version, with any later edits still pending
    /// on top. The app sees the row as the server will keep it.
    func rollBack(_ request: UploadRequest) throws {
        try ferryWrite { db in
            let table = try Self.resource(db, request.resource)
            guard let base = try Self.base(db, request.resource, id: request.rowID) else {
                try db.execute(sql: "DELETE FROM \(LocalSchema.quote(request.resource)) WHERE id = ?", arguments: [request.rowID])
                return
            }
            var row = base.row
            if let local = try Self.row(db, request.resource, id: request.rowID) {
                for field in try Self.dirtyFields(db, request.resource, id: request.rowID) { row[field] = local[field] }
            }
            try Self.put(db, table, row)
        }
    }
}
