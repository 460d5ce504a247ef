import Foundation
import GRDB

/// Applying the server's versions of rows: from the changes feed, and from
/// the `current` of a conflict answer.
extension FerryStore {
    /// The changes feed cursor saved with the last applied page, if any.
    public func cursor() throws -> String? {
        try database.read { db in try String.fetchOne(db, sql: "SELECT value FROM ferry_state WHERE key = 'cursor'") }
    }

    /// Applies one page of the feed and saves its cursor, in one transaction:
    /// a crash leaves the page applied with its cursor, or neither.
    func applyPage(
        _ changes: [(resource: String, data: RowData)], cursor: String?,
        resolve: @Sendable (String) -> ThreeWayMerge.Resolver?
    ) throws -> [SyncEvent] {
        try ferryWrite { db in
            let changes = try Self.sparingSubscribed(db, changes)
            let events = try Self.applyRemote(db, changes, resolve: resolve)
            try Self.markDefault(db, changes)
            if let cursor { try Self.saveState(db, "cursor", cursor) }
            return events
        }
    }

    /// Applies the server's version of one row (a conflict's `current`).
    func applyRemote(_ resource: String, _ data: RowData, resolver: ThreeWayMerge.Resolver?) throws -> [SyncEvent] {
        try ferryWrite { db in try Self.applyRemote(db, resource, data, resolver: resolver, maybePending: true) }
    }

    static func applyRemote(
        _ db: Database, _ changes: [(resource: String, data: RowData)],
        resolve: (String) -> ThreeWayMerge.Resolver?
    ) throws -> [SyncEvent] {
        // Most pages meet an empty outbox: then no row needs its own lookup.
        let outboxBusy =
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_outbox WHERE \(OutboxState.waiting()))")) ?? false
        var events: [SyncEvent] = []
        let page = PageWrites()
        for change in changes {
            events += try applyRemote(
                db, change.resource, change.data, resolver: resolve(change.resource), maybePending: outboxBusy, page: page)
        }
        return events
    }

    static func saveState(_ db: Database, _ key: String, _ value: String) throws {
        try db.cachedStatement(sql: "INSERT INTO ferry_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .execute(arguments: [key, value])
    }

    static func loadState(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM ferry_state WHERE key = ?"), arguments: [key])
    }

    /// Applies one server row: ``RemoteDecision`` decides from what the store
    /// knows of it (reading only what the decision needs), and this carries
    /// the decision out.
    static func applyRemote(
        _ db: Database, _ resource: String, _ data: RowData, resolver: ThreeWayMerge.Resolver?,
        maybePending: Bool, page: PageWrites? = nil
    ) throws -> [SyncEvent] {
        let table = try page?.resource(db, resource) ?? Self.resource(db, resource)
        guard let id = data["id"]?.string ?? data["id"]?.int.map(String.init) else { return [] }
        let pending = try maybePending && hasPending(db, resource, id: id)
        let needs = RemoteDecision.needs(data, pending: pending)
        var local = RemoteDecision.Local(pending: pending)
        if needs.contains(.base) { local.base = try base(db, resource, id: id) }
        if needs.contains(.row) { local.row = try row(db, resource, id: id) }
        if needs.contains(.dirty) { local.dirty = try dirtyFields(db, resource, id: id) }
        switch RemoteDecision.decide(resource: resource, id: id, remote: data, local: local, resolver: resolver) {
        case .ignore:
            return []
        case .apply:
            try putIfNewer(db, table, data, page: page)
            // A base left by edits the server refused is no one's base any more.
            try dropBase(db, resource, id: id)
            return []
        case .keep:
            try setBase(db, resource, data)
            return []
        case .merge(let merged):
            try put(db, table, merged)
            try setBase(db, resource, data)
            return []
        case .conflict(let merged, let conflicts):
            try put(db, table, merged)
            try setBase(db, resource, data)
            try recordConflict(db, resource, id: id, fields: conflicts.map(\.field))
            return [.conflict(resource: resource, id: id, conflicts: conflicts)]
        case .remove(let removal):
            if let problem = removal.problem { try transition(db, row: resource, id: id, .refused, error: problem) }
            try remove(db, resource, id: id)
            return removal.event.map { [$0] } ?? []
        }
    }
}
