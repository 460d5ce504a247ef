import Foundation
import GRDB

/// Typed rows: the app's ``FerryRecord`` structs, written with the same
/// outbox, checks and merge as the dictionary calls underneath them.
extension FerryStore {
    /// Inserts `record` as a new row, recorded for upload in the same
    /// transaction. A ranked record without a rank goes last in its scope.
    /// Columns left nil get the server's default on upload. Returns the
    /// record as stored.
    @discardableResult
    public func insert<T: FerryRecord>(_ record: T) throws -> T {
        try database.write { db in try Self.insert(db, record) }
    }

    /// Writes the fields of `record` that differ from the stored row. Columns
    /// the server owns (`revision`, `last_modified`) are never written; one set
    /// once at creation may be left nil, but not changed.
    ///
    /// A record read before a sync holds the old values of what the sync
    /// changed, and writing it whole would send them back as edits. Prefer
    /// ``update(_:_:)``, which writes only what its closure changes.
    public func update<T: FerryRecord>(_ record: T) throws {
        try database.write { db in try Self.update(db, record) }
    }

    /// Changes the stored row of `record`'s id with `change`, and writes only
    /// the fields it changed (the per-field dirty mask the merge works from).
    /// Returns the record as stored.
    @discardableResult
    public func update<T: FerryRecord>(_ record: T, _ change: (inout T) throws -> Void) throws -> T {
        try database.write { db in try Self.update(db, T.self, id: record.id, change) }
    }

    /// Deletes `record`'s row locally at once; the server gets the delete on upload.
    public func delete<T: FerryRecord>(_ record: T) throws {
        try database.write { db in try Self.delete(db, T.self, id: record.id) }
    }

    /// Moves `record` right after `after` (nil: first) in its rank scope, with
    /// a FerryRank key between its new neighbours. Returns it as stored.
    @discardableResult
    public func move<T: FerryRankedRecord>(_ record: T, after: T?) throws -> T {
        try database.write { db in try Self.move(db, record, after: after) }
    }

    /// `record`'s sync state (``RowState``): synced, dirty, syncing, conflict or rejected.
    public func state<T: FerryRecord>(of record: T) throws -> RowState {
        try state(T.resource, id: record.id.rowID)
    }

    /// The rows of `T` (those matching `predicate`, if given), in rank order
    /// for a ranked resource, else by id.
    ///
    /// ```swift
    /// let terms = try store.fetch(Term.self, where: Term.Columns.setID == set.id)
    /// ```
    public func fetch<T: FerryRecord>(_ type: T.Type, where predicate: SQLExpression? = nil) throws -> [T] {
        try database.read { db in try Self.fetch(db, type, where: predicate) }
    }

    /// The row of `T` with id `id`, if there is one.
    public func fetch<T: FerryRecord>(_ type: T.Type, id: T.ID) throws -> T? {
        try database.read { db in try Self.fetch(db, type, id: id) }
    }

    /// What a GRDB request of records fetches (`Term.filter(...).order(...)`,
    /// with joins), after the same check as every record call.
    public func fetch<Request: FetchRequest>(_ request: Request) throws -> [Request.RowDecoder] where Request.RowDecoder: FerryRecord {
        try database.read { db in
            _ = try Self.resource(for: Request.RowDecoder.self, db)
            return try Self.decoding(Request.RowDecoder.self) { try request.fetchAll(db) }
        }
    }

    /// ``fetch(_:where:)`` again after every change to the table, from the
    /// app's writes and from sync alike: an `AsyncSequence`.
    public func observe<T: FerryRecord>(_ type: T.Type, where predicate: SQLExpression? = nil) -> AsyncValueObservation<[T]> {
        Self.observation(type, where: predicate).values(in: database)
    }

    /// ``fetch(_:where:)`` as a GRDB `ValueObservation`, for SwiftUI (GRDBQuery)
    /// or `start(in: store.database, ...)`.
    public static func observation<T: FerryRecord>(_ type: T.Type, where predicate: SQLExpression? = nil)
        -> ValueObservation<ValueReducers.Fetch<[T]>>
    {
        ValueObservation.tracking { db in try fetch(db, type, where: predicate) }
    }

    // MARK: In a transaction

    static func insert<T: FerryRecord>(_ db: Database, _ record: T) throws -> T {
        let resource = try resource(for: T.self, db)
        var values = try values(record, resource).filter { $0.value != .null }
        if resource.ranked == true, resource.column("rank") != nil, values["rank"] == nil {
            values["rank"] = .string(try rankAtEnd(db, resource.name, scope: resource.rankScope.flatMap { values[$0] }))
        }
        let id = try create(db, resource.name, values)
        return try stored(db, T.self, id)
    }

    static func update<T: FerryRecord>(_ db: Database, _ record: T) throws {
        let resource = try resource(for: T.self, db)
        let values = try values(record, resource).filter { name, value in
            !ServerSchema.Column.syncColumns.contains(name) && !(value == .null && resource.column(name)?.changeable == false)
        }
        try update(db, resource.name, id: record.id.rowID, values)
    }

    static func update<T: FerryRecord>(_ db: Database, _ type: T.Type, id: T.ID, _ change: (inout T) throws -> Void) throws -> T {
        let resource = try resource(for: T.self, db)
        guard let current = try fetch(db, type, id: id) else { throw FerryKitError.noSuchRow(resource: resource.name, id: id.rowID) }
        var changed = current
        try change(&changed)
        let before = try values(current, resource), after = try values(changed, resource)
        let edits = after.filter { before[$0.key] != $0.value }
        if after["id"] != before["id"] { throw FerryKitError.readOnlyColumn(resource: resource.name, column: "id") }
        try update(db, resource.name, id: id.rowID, edits)
        return try stored(db, T.self, id.rowID)
    }

    static func delete<T: FerryRecord>(_ db: Database, _ type: T.Type, id: T.ID) throws {
        let resource = try resource(for: T.self, db)
        try delete(db, resource.name, id: id.rowID)
    }

    static func move<T: FerryRankedRecord>(_ db: Database, _ record: T, after: T?) throws -> T {
        let resource = try resource(for: T.self, db)
        try move(db, resource.name, id: record.id.rowID, after: after?.id.rowID)
        return try stored(db, T.self, record.id.rowID)
    }

    static func fetch<T: FerryRecord>(_ db: Database, _ type: T.Type, where predicate: SQLExpression?) throws -> [T] {
        let resource = try resource(for: T.self, db)
        var request = T.all()
        if let predicate { request = request.filter(predicate) }
        request =
            resource.ranked == true && resource.column("rank") != nil
            ? request.order(Column("rank"), Column("id")) : request.order(Column("id"))
        return try decoding(T.self) { try request.fetchAll(db) }
    }

    static func fetch<T: FerryRecord>(_ db: Database, _ type: T.Type, id: T.ID) throws -> T? {
        _ = try resource(for: T.self, db)
        return try decoding(T.self) { try T.filter(Column("id") == id.rowID).fetchOne(db) }
    }

    /// The record just written, as stored.
    static func stored<T: FerryRecord>(_ db: Database, _ type: T.Type, _ id: String) throws -> T {
        guard let record = try decoding(T.self, { try T.filter(Column("id") == id).fetchOne(db) }) else {
            throw FerryKitError.noSuchRow(resource: T.resource, id: id)
        }
        return record
    }
}

extension FerryStore.WriteTransaction {
    /// ``FerryStore/insert(_:)`` inside the group.
    @discardableResult
    public func insert<T: FerryRecord>(_ record: T) throws -> T { try FerryStore.insert(db, record) }

    /// ``FerryStore/update(_:)`` inside the group.
    public func update<T: FerryRecord>(_ record: T) throws { try FerryStore.update(db, record) }

    /// ``FerryStore/update(_:_:)`` inside the group.
    @discardableResult
    public func update<T: FerryRecord>(_ record: T, _ change: (inout T) throws -> Void) throws -> T {
        try FerryStore.update(db, T.self, id: record.id, change)
    }

    /// The record form of ``FerryStore/delete(_:id:)`` inside the group.
    public func delete<T: FerryRecord>(_ record: T) throws { try FerryStore.delete(db, T.self, id: record.id) }

    /// The record form of ``FerryStore/move(_:id:after:)`` inside the group.
    @discardableResult
    public func move<T: FerryRankedRecord>(_ record: T, after: T?) throws -> T { try FerryStore.move(db, record, after: after) }

    /// ``FerryStore/fetch(_:where:)`` inside the group, seeing its own writes.
    public func fetch<T: FerryRecord>(_ type: T.Type, where predicate: SQLExpression? = nil) throws -> [T] {
        try FerryStore.fetch(db, type, where: predicate)
    }
}
