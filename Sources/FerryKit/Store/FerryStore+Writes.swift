import FerryRank
import Foundation
import GRDB

/// The app's writes: applied to the local row at once. The table's triggers
/// (``LocalTriggers``) record each for upload in the same statement, as they
/// do for the app's own GRDB writes.
extension FerryStore {
    /// Creates a row; the id is a new UUID unless `values` has one. Returns the id.
    @discardableResult
    public func create(_ resource: String, _ values: RowData) throws -> String {
        try database.write { db in try Self.create(db, resource, values) }
    }

    /// Changes the fields in `values` of row `id`.
    public func update(_ resource: String, id: String, _ values: RowData) throws {
        try database.write { db in try Self.update(db, resource, id: id, values) }
    }

    /// Deletes row `id` locally at once; the server gets the delete on upload.
    public func delete(_ resource: String, id: String) throws {
        try database.write { db in try Self.delete(db, resource, id: id) }
    }

    /// Moves row `id` of a ranked resource right after `after` (nil: first),
    /// with a FerryRank key between its new neighbours, so no other row changes
    /// and moves from several devices merge.
    public func move(_ resource: String, id: String, after: String?) throws {
        try database.write { db in try Self.move(db, resource, id: id, after: after) }
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
    /// two groups that write the same row become one batch. GRDB writes made
    /// on ``WriteTransaction/database`` belong to the group too.
    @discardableResult
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try database.write { db in
            try context.inGroup(UUID().uuidString.lowercased()) { try body(WriteTransaction(db: db)) }
        }
    }

    /// The writes of one ``FerryStore/write(_:)`` group; valid only inside its closure.
    public struct WriteTransaction {
        let db: Database

        /// The group's GRDB connection: records and SQL written here are
        /// recorded for upload with the group.
        public var database: Database { db }

        /// ``FerryStore/create(_:_:)`` inside the group.
        @discardableResult
        public func create(_ resource: String, _ values: RowData) throws -> String {
            try FerryStore.create(db, resource, values)
        }

        /// ``FerryStore/update(_:id:_:)`` inside the group.
        public func update(_ resource: String, id: String, _ values: RowData) throws {
            try FerryStore.update(db, resource, id: id, values)
        }

        /// ``FerryStore/delete(_:id:)`` inside the group.
        public func delete(_ resource: String, id: String) throws {
            try FerryStore.delete(db, resource, id: id)
        }

        /// ``FerryStore/move(_:id:after:)`` inside the group.
        public func move(_ resource: String, id: String, after: String?) throws {
            try FerryStore.move(db, resource, id: id, after: after)
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
            return try Self.create(db, resource, row.filter { writable.contains($0.key) && $0.value != .null })
        }
    }

    /// A rank after every row of `scope`'s value in `resource`, for a create at the end.
    public func rankAtEnd(_ resource: String, scope value: JSONValue?) throws -> String {
        try database.read { db in try Self.rankAtEnd(db, resource, scope: value) }
    }

    /// The rank that puts row `id` right after `after` (nil: first) among its
    /// siblings, for an app that moves rows with its own SQL or GRDB records:
    /// ``move(_:id:after:)`` is this, then the update.
    public func rank(moving id: String, of resource: String, after: String?) throws -> String {
        try database.read { db in try Self.rank(db, resource, moving: id, after: after) }
    }

    static func create(_ db: Database, _ resource: String, _ values: RowData) throws -> String {
        let table = try Self.resource(db, resource)
        try WriteCheck.create(values, table)
        let id = values["id"]?.string ?? UUID().uuidString.lowercased()
        var row = values.filter { $0.value != .null }
        row["id"] = .string(id)
        let columns = row.keys.sorted()
        let sql =
            "INSERT INTO \(LocalSchema.quote(resource)) (\(columns.map(LocalSchema.quote).joined(separator: ", "))) "
            + "VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        do {
            try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(columns.map { databaseValue(row[$0] ?? .null) }))
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
            throw FerryKitError.rowExists(resource: resource, id: id)
        }
        return id
    }

    static func update(_ db: Database, _ resource: String, id: String, _ values: RowData) throws {
        let table = try Self.resource(db, resource)
        guard let row = try Self.row(db, resource, id: id) else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
        let fields = try WriteCheck.update(values, current: row, table).sorted()
        guard !fields.isEmpty else { return }
        let assignments = fields.map { "\(LocalSchema.quote($0)) = ?" }.joined(separator: ", ")
        try db.cachedStatement(sql: "UPDATE \(LocalSchema.quote(resource)) SET \(assignments) WHERE id = ?")
            .execute(arguments: StatementArguments(fields.map { databaseValue(values[$0] ?? .null) }) + [id])
    }

    static func delete(_ db: Database, _ resource: String, id: String) throws {
        _ = try Self.resource(db, resource)
        try db.cachedStatement(sql: "DELETE FROM \(LocalSchema.quote(resource)) WHERE id = ?").execute(arguments: [id])
        guard db.changesCount > 0 else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
    }

    static func move(_ db: Database, _ resource: String, id: String, after: String?) throws {
        let key = try rank(db, resource, moving: id, after: after)
        try db.cachedStatement(sql: "UPDATE \(LocalSchema.quote(resource)) SET \"rank\" = ? WHERE id = ?").execute(arguments: [key, id])
    }

    static func rank(_ db: Database, _ resource: String, moving id: String, after: String?) throws -> String {
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
        return try Rank.between(lower, upper)
    }

    static func rankAtEnd(_ db: Database, _ resource: String, scope value: JSONValue?) throws -> String {
        let table = try Self.resource(db, resource)
        let last = try Self.rows(db, resource, where: table.rankScope, equals: value).last?["rank"]?.string
        return try Rank.last(after: last)
    }
}
