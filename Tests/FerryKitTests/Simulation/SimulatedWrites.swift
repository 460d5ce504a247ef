@testable import FerryKit
import Foundation
import GRDB
@testable import FerryKitTestSupport

/// How a simulated device writes: through the store's own calls, or as an app
/// that only ever uses GRDB would (issue 35), with records (``TestSet``,
/// ``TestTerm``) or SQL on `store.database`, drawn per write from the seed.
/// Either way the outbox must record the same, and the devices converge.
struct SimulatedWrites {
    let store: FerryStore
    let grdb: Bool
    /// True: this write uses a GRDB record where there is one, else SQL.
    let draw: () -> Bool

    @discardableResult
    func create(_ resource: String, _ values: RowData) throws -> String {
        guard grdb else { return try store.create(resource, values) }
        try tableExists(resource)
        let id = UUID().uuidString.lowercased()
        try store.database.write { db in
            switch (resource, draw()) {
            case ("study_sets", true):
                try TestSet(id: FerryID(rawValue: id), title: values["title"]?.string ?? "", description: values["description"]?.string).insert(db)
            case ("terms", true):
                try TestTerm(
                    id: FerryID(rawValue: id), setID: FerryID(rawValue: values["set_id"]?.string ?? ""), word: values["word"]?.string,
                    definition: values["definition"]?.string, rank: values["rank"]?.string
                ).insert(db)
            default:
                var row = values
                row["id"] = .string(id)
                let columns = row.keys.sorted()
                try db.execute(
                    sql: "INSERT INTO \(LocalSchema.quote(resource)) (\(columns.map(LocalSchema.quote).joined(separator: ", "))) "
                        + "VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
                    arguments: StatementArguments(columns.map { FerryStore.databaseValue(row[$0] ?? .null) }))
            }
        }
        return id
    }

    func update(_ resource: String, id: String, _ values: RowData) throws {
        guard grdb else { return try store.update(resource, id: id, values) }
        try tableExists(resource)
        try store.database.write { db in
            switch (resource, draw()) {
            case ("study_sets", true):
                guard var set = try TestSet.fetchOne(db, key: id) else { return }
                if let title = values["title"]?.string { set.title = title }
                if let description = values["description"]?.string { set.description = description }
                try set.update(db)
            case ("terms", true):
                guard var term = try TestTerm.fetchOne(db, key: id) else { return }
                if let word = values["word"]?.string { term.word = word }
                if let definition = values["definition"]?.string { term.definition = definition }
                if let rank = values["rank"]?.string { term.rank = rank }
                try term.update(db)
            default:
                let columns = values.keys.sorted()
                try db.execute(
                    sql: "UPDATE \(LocalSchema.quote(resource)) SET \(columns.map { "\(LocalSchema.quote($0)) = ?" }.joined(separator: ", ")) "
                        + "WHERE id = ?",
                    arguments: StatementArguments(columns.map { FerryStore.databaseValue(values[$0] ?? .null) }) + [id])
            }
        }
    }

    func delete(_ resource: String, id: String) throws {
        guard grdb else { return try store.delete(resource, id: id) }
        try tableExists(resource)
        try store.database.write { db in
            switch (resource, draw()) {
            case ("study_sets", true): _ = try TestSet.deleteOne(db, key: id)
            case ("terms", true): _ = try TestTerm.deleteOne(db, key: id)
            default: try db.execute(sql: "DELETE FROM \(LocalSchema.quote(resource)) WHERE id = ?", arguments: [id])
            }
        }
    }

    /// Before its first sync a store has no tables: an app writing with GRDB
    /// then meets "no such table", as the store's calls meet an unknown resource.
    func tableExists(_ resource: String) throws {
        guard try store.schema()?[resource] != nil else { throw FerryKitError.unknownResource(resource) }
    }

    /// A ranked row (a term, a todo) moved right after `after` (nil: first): with
    /// GRDB, the rank comes from `store.rank(moving:of:after:)` and the app writes it.
    func move(_ resource: String, id: String, after: String?) throws {
        guard grdb else { return try store.move(resource, id: id, after: after) }
        let rank = try store.rank(moving: id, of: resource, after: after)
        try update(resource, id: id, ["rank": .string(rank)])
    }
}
