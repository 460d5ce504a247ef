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
    func applyPage(_ changes: [(resource: String, data: RowData)], cursor: String?,
                   resolve: @Sendable (String) -> ThreeWayMerge.Resolver?) throws -> [SyncEvent] {
        try database.write { db in
            let events = try Self.applyRemote(db, changes, resolve: resolve)
            if let cursor { try Self.saveState(db, "cursor", cursor) }
            return events
        }
    }

    /// Applies the server's version of one row (a conflict's `current`).
    func applyRemote(_ resource: String, _ data: RowData, resolver: ThreeWayMerge.Resolver?) throws -> [SyncEvent] {
        try database.write { db in try Self.applyRemote(db, resource, data, resolver: resolver, maybePending: true) }
    }

    static func applyRemote(_ db: Database, _ changes: [(resource: String, data: RowData)],
                            resolve: (String) -> ThreeWayMerge.Resolver?) throws -> [SyncEvent] {
        // Most pages meet an empty outbox: then no row needs its own lookup.
        let outboxBusy = try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_outbox WHERE state <> 'rejected')")) ?? false
        var events: [SyncEvent] = []
        for change in changes {
            events += try applyRemote(db, change.resource, change.data, resolver: resolve(change.resource), maybePending: outboxBusy)
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

    /// The rule for one incoming row: older or equal revisions are ignored; a
    /// tombstone or revocation removes the row (pending edits become rejected,
    /// with an event); a row without local edits is replaced; a row with local
    /// edits is merged field by field, the incoming row becoming its new base.
    static func applyRemote(_ db: Database, _ resource: String, _ data: RowData, resolver: ThreeWayMerge.Resolver?,
                            maybePending: Bool) throws -> [SyncEvent] {
        let table = try Self.resource(db, resource)
        guard let id = data["id"]?.string ?? data["id"]?.int.map(String.init) else { return [] }
        let pending = try maybePending && hasPending(db, resource, id: id)
        if data["is_deleted"]?.bool == true {
            let revoked = data["revoked"]?.bool == true
            if !revoked, let base = try base(db, resource, id: id), let revision = data["revision"]?.int, revision <= base.revision {
                return []
            }
            let local = try row(db, resource, id: id)
            let existed = local != nil || pending
            if pending {
                let problem = JSONValue.object(["code": .string(revoked ? "revoked" : "gone"),
                                                "detail": .string(revoked ? "access to the row was lost" : "the row was deleted")]).encoded()
                try db.execute(sql: "UPDATE ferry_outbox SET state = 'rejected', last_error = ? WHERE resource = ? AND row_id = ? AND state <> 'rejected'",
                               arguments: [String(decoding: problem, as: UTF8.self), resource, id])
            }
            try remove(db, resource, id: id)
            return existed ? [.removed(resource: resource, id: id, revoked: revoked, discardedEdits: pending,
                                       localVersion: pending ? local : nil)] : []
        }
        guard data["revision"]?.int != nil else { return [] }
        guard pending else {
            try putIfNewer(db, table, data)
            // A base left by edits the server refused is no one's base any more.
            try dropBase(db, resource, id: id)
            return []
        }
        let base = try base(db, resource, id: id)
        if let base, let revision = data["revision"]?.int, base.revision >= revision { return [] }
        let dirty = try dirtyFields(db, resource, id: id)
        guard let local = try row(db, resource, id: id) else {
            // Deleted locally, not yet uploaded: the delete goes on, on the new base.
            try setBase(db, resource, data)
            return []
        }
        let (merged, conflicts) = ThreeWayMerge.merge(base: base?.row, local: local, remote: data, dirty: dirty, resolve: resolver)
        try put(db, table, merged)
        try setBase(db, resource, data)
        guard !conflicts.isEmpty else { return [] }
        try recordConflict(db, resource, id: id, fields: conflicts.map(\.field))
        return [.conflict(resource: resource, id: id, conflicts: conflicts)]
    }
}
