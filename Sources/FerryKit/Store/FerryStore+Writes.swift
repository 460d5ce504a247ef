import FerryRank
import Foundation
import GRDB

/// The app's writes: applied to the local row at once, and recorded for upload
/// in the same transaction.
extension FerryStore {
    /// Creates a row; the id is a new UUID unless `values` has one. Returns the id.
    @discardableResult
    public func create(_ resource: String, _ values: RowData) throws -> String {
        try database.write { db in
            let table = try Self.resource(db, resource)
            let id = values["id"]?.string ?? UUID().uuidString.lowercased()
            var row = values
            row["id"] = .string(id)
            try Self.put(db, table, row)
            try Self.record(db, resource, id: id, kind: .create, fields: Set(values.keys).subtracting(["id"]))
            return id
        }
    }

    /// Changes the fields in `values` of row `id`.
    public func update(_ resource: String, id: String, _ values: RowData) throws {
        try database.write { db in
            let table = try Self.resource(db, resource)
            guard var row = try Self.row(db, resource, id: id) else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
            try Self.captureBase(db, resource, row)
            let fields = Set(values.keys).subtracting(["id", "revision", "last_modified", "is_deleted"])
            for field in fields { row[field] = values[field] }
            try Self.put(db, table, row)
            try Self.record(db, resource, id: id, kind: .update, fields: fields)
        }
    }

    /// Deletes row `id` locally at once; the server gets the delete on upload.
    public func delete(_ resource: String, id: String) throws {
        try database.write { db in
            guard let row = try Self.row(db, resource, id: id) else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
            try Self.captureBase(db, resource, row)
            try db.execute(sql: "DELETE FROM \(LocalSchema.quote(resource)) WHERE id = ?", arguments: [id])
            try Self.record(db, resource, id: id, kind: .delete, fields: [])
        }
    }

    /// Moves row `id` of a ranked resource right after `after` (nil: first),
    /// with a FerryRank key between its new neighbours, so no other row changes
    /// and moves from several devices merge.
    public func move(_ resource: String, id: String, after: String?) throws {
        try database.write { db in
            let table = try Self.resource(db, resource)
            guard let row = try Self.row(db, resource, id: id) else { throw FerryKitError.noSuchRow(resource: resource, id: id) }
            let scope = table.rankScope
            let siblings = try Self.rows(db, resource, where: scope, equals: scope.flatMap { row[$0] })
                .filter { $0["id"]?.string != id }
            let ranks = siblings.map { $0["rank"]?.string }
            let index = after.flatMap { anchor in siblings.firstIndex { $0["id"]?.string == anchor } }
            let lower = index.flatMap { ranks[$0] }
            let upperIndex = index.map { $0 + 1 } ?? 0
            let upper = upperIndex < ranks.count ? ranks[upperIndex] : nil
            let key = try Rank.between(lower, upper)
            try Self.captureBase(db, resource, row)
            var moved = row
            moved["rank"] = .string(key)
            try Self.put(db, table, moved)
            try Self.record(db, resource, id: id, kind: .update, fields: ["rank"])
        }
    }

    /// A rank after every row of `scope`'s value in `resource`, for a create at the end.
    public func rankAtEnd(_ resource: String, scope value: JSONValue?) throws -> String {
        try database.read { db in
            let table = try Self.resource(db, resource)
            let last = try Self.rows(db, resource, where: table.rankScope, equals: value).last?["rank"]?.string
            return try Rank.last(after: last)
        }
    }

    static func record(_ db: Database, _ resource: String, id: String, kind: PendingOperation.Kind, fields: Set<String>) throws {
        let encoded = String(decoding: try JSONEncoder().encode(fields.sorted()), as: UTF8.self)
        try db.execute(sql: "INSERT INTO ferry_outbox (op_id, resource, row_id, kind, fields, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       arguments: [UUID().uuidString.lowercased(), resource, id, kind.rawValue, encoded, Date().timeIntervalSince1970])
    }
}
