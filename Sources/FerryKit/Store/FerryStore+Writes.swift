import FerryRank
import Foundation
import GRDB

/// The app's writes: applied to the local row at once, and recorded for upload
/// in the same transaction.
extension FerryStore {
    /// Creates a row; the id is a new UUID unless `values` has one. Returns the id.
    @discardableResult
    public func create(_ resource: String, _ values: RowData) throws -> String {
        try database.write { db in try Self.create(db, resource, values, group: nil) }
    }

    /// Changes the fields in `values` of row `id`.
    public func update(_ resource: String, id: String, _ values: RowData) throws {
        try database.write { db in try Self.update(db, resource, id: id, values, group: nil) }
    }

    /// Deletes row `id` locally at once; the server gets the delete on upload.
    public func delete(_ resource: String, id: String) throws {
        try database.write { db in try Self.delete(db, resource, id: id, group: nil) }
    }

    /// Moves row `id` of a ranked resource right after `after` (nil: first),
    /// with a FerryRank key between its new neighbours, so no other row changes
    /// and moves from several devices merge.
    public func move(_ resource: String, id: String, after: String?) throws {
        try database.write { db in try Self.move(db, resource, id: id, after: after, group: nil) }
    }

    /// Writes that belong together: they apply locally in one SQLite
    /// transaction (all or none, if `body` throws), and reach the server in one
    /// `POST /v1/batch`, which applies all of them or none. Use it for rows
    /// that make no sense apart (a set and its first terms, a card moved
    /// between lists with its new position). A group the server refuses is
    /// refused whole: every row in it rolls back, each with a
    /// ``SyncEvent/rejected(resource:id:status:problem:)``. A conflict on one
    /// of its rows is merged and the group sent again.
    ///
    /// Later writes to the same rows outside a group are sent with the group;
    /// two groups that write the same row become one batch.
    @discardableResult
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try database.write { db in try body(WriteTransaction(db: db, group: UUID().uuidString.lowercased())) }
    }

    /// The writes of one ``FerryStore/write(_:)`` group; valid only inside its closure.
    public struct WriteTransaction {
        let db: Database
        let group: String

        /// ``FerryStore/create(_:_:)`` inside the group.
        @discardableResult
        public func create(_ resource: String, _ values: RowData) throws -> String {
            try FerryStore.create(db, resource, values, group: group)
        }

        /// ``FerryStore/update(_:id:_:)`` inside the group.
        public func update(_ resource: String, id: String, _ values: RowData) throws {
            try FerryStore.update(db, resource, id: id, values, group: group)
        }

        /// ``FerryStore/delete(_:id:)`` inside the group.
        public func delete(_ resource: String, id: String) throws {
            try FerryStore.delete(db, resource, id: id, group: group)
        }

        /// ``FerryStore/move(_:id:after:)`` inside the group.
        public func move(_ resource: String, id: String, after: String?) throws {
            try FerryStore.move(db, resource, id: id, after: after, group: group)
        }

        /// ``FerryStore/rankAtEnd(_:scope:)``, seeing the group's own writes.
        public func rankAtEnd(_ resource: String, scope value: JSONValue?) throws -> String {
            try FerryStore.rankAtEnd(db, resource, scope: value)
        }
    }

    /// Creates a new row from another row's values (its writable fields, a new
    /// id): for keeping the local version of a row the server deleted
    /// (``SyncEvent/removed(resource:id:revoked:discardedEdits:localVersion:)``).
    /// Returns the new id.
    @discardableResult
    public func recreate(_ resource: String, from row: RowData) throws -> String {
        try database.write { db in
            let writable = Set(try Self.resource(db, resource).writableColumns).subtracting(["id"])
            return try Self.create(db, resource, row.filter { writable.contains($0.key) && $0.value != .null }, group: nil)
        }
    }

    /// A rank after every row of `scope`'s value in `resource`, for a create at the end.
    public func rankAtEnd(_ resource: String, scope value: JSONValue?) throws -> String {
        try database.read { db in try Self.rankAtEnd(db, resource, scope: value) }
    }

    static func create(_ db: Database, _ resource: String, _ values: RowData, group: String?) throws -> String {
        let table = try Self.resource(db, resource)
        try WriteCheck.create(values, table)
        let id = values["id"]?.string ?? UUID().uuidString.lowercased()
        var row = values.filter { $0.value != .null }
        row["id"] = .string(id)
        try put(db, table, row)
        try record(db, resource, id: id, kind: .create, fields: Set(row.keys).subtracting(["id"]), group: group)
        return id
    }

    static func update(_ db: Database, _ resource: String, id: String, _ values: RowData, group: String?) throws {
        let table = try Self.resource(db, resource)
        guard var row = try Self.row(db, resource, id: id) else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
        let fields = try WriteCheck.update(values, current: row, table)
        guard !fields.isEmpty else { return }
        try captureBase(db, resource, row)
        for field in fields { row[field] = values[field] }
        try put(db, table, row)
        try record(db, resource, id: id, kind: .update, fields: fields, group: group)
    }

    static func delete(_ db: Database, _ resource: String, id: String, group: String?) throws {
        guard let row = try Self.row(db, resource, id: id) else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
        try captureBase(db, resource, row)
        try db.execute(sql: "DELETE FROM \(LocalSchema.quote(resource)) WHERE id = ?", arguments: [id])
        try record(db, resource, id: id, kind: .delete, fields: [], group: group)
    }

    static func move(_ db: Database, _ resource: String, id: String, after: String?, group: String?) throws {
        let table = try Self.resource(db, resource)
        guard table.ranked == true, table.column("rank") != nil else { throw FerryKitError.notRanked(resource) }
        guard let row = try Self.row(db, resource, id: id) else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
        let scope = table.rankScope
        let siblings = try Self.rows(db, resource, where: scope, equals: scope.flatMap { row[$0] })
            .filter { $0["id"]?.string != id }
        let ranks = siblings.map { $0["rank"]?.string }
        let index = after.flatMap { anchor in siblings.firstIndex { $0["id"]?.string == anchor } }
        let lower = index.flatMap { ranks[$0] }
        // Equal ranks are legal (two devices appended offline); no key lies
        // strictly between two equal ones, so the row goes after the whole tie,
        // with no other row changed.
        var upperIndex = index.map { $0 + 1 } ?? 0
        while let lower, upperIndex < ranks.count, let next = ranks[upperIndex], next <= lower { upperIndex += 1 }
        let upper = upperIndex < ranks.count ? ranks[upperIndex] : nil
        let key = try Rank.between(lower, upper)
        try captureBase(db, resource, row)
        var moved = row
        moved["rank"] = .string(key)
        try put(db, table, moved)
        try record(db, resource, id: id, kind: .update, fields: ["rank"], group: group)
    }

    static func rankAtEnd(_ db: Database, _ resource: String, scope value: JSONValue?) throws -> String {
        let table = try Self.resource(db, resource)
        let last = try Self.rows(db, resource, where: table.rankScope, equals: value).last?["rank"]?.string
        return try Rank.last(after: last)
    }

    static func record(_ db: Database, _ resource: String, id: String, kind: PendingOperation.Kind, fields: Set<String>,
                       group: String?) throws {
        let encoded = String(decoding: try JSONEncoder().encode(fields.sorted()), as: UTF8.self)
        try db.execute(sql: """
            INSERT INTO ferry_outbox (op_id, resource, row_id, kind, fields, created_at, group_id) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [UUID().uuidString.lowercased(), resource, id, kind.rawValue, encoded, Date().timeIntervalSince1970, group])
    }
}
