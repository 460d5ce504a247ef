import Foundation
import GRDB

/// Reading rows, and the conversion between JSON values and SQLite's.
extension FerryStore {
    /// The row `id` of `resource` as the app sees it (local edits applied), or nil.
    public func row(_ resource: String, id: String) throws -> RowData? {
        try database.read { db in try Self.row(db, resource, id: id) }
    }

    /// The rows of `resource`, optionally those whose `column` equals `value`;
    /// ranked resources in rank order, others by id.
    public func rows(_ resource: String, where column: String? = nil, equals value: JSONValue? = nil) throws -> [RowData] {
        try database.read { db in try Self.rows(db, resource, where: column, equals: value) }
    }

    /// Observes ``rows(_:where:equals:)``: a new array after every change that
    /// touches the table, from this process's writes and from sync alike.
    public func observe(_ resource: String, where column: String? = nil, equals value: JSONValue? = nil)
        -> AsyncValueObservation<[RowData]>
    {
        ValueObservation.tracking { db in try Self.rows(db, resource, where: column, equals: value) }
            .values(in: database)
    }

    static func rows(_ db: Database, _ name: String, where column: String?, equals value: JSONValue?) throws -> [RowData] {
        let resource = try resource(db, name)
        let table = LocalSchema.quote(name)
        let order = resource.ranked == true ? "\"rank\", \"id\"" : "\"id\""
        var sql = "SELECT * FROM \(table)"
        var arguments = StatementArguments()
        if let column, resource.column(column) != nil {
            sql += " WHERE \(LocalSchema.quote(column)) = ?"
            arguments += [databaseValue(value ?? .null)]
        }
        sql += " ORDER BY \(order)"
        return try GRDB.Row.fetchAll(db, sql: sql, arguments: arguments).map { decode($0, resource) }
    }

    static func row(_ db: Database, _ name: String, id: String) throws -> RowData? {
        let resource = try resource(db, name)
        let row = try GRDB.Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM \(LocalSchema.quote(name)) WHERE id = ?"), arguments: [id])
        return row.map { decode($0, resource) }
    }

    static func decode(_ row: GRDB.Row, _ resource: ServerSchema.Resource) -> RowData {
        var out: RowData = [:]
        for name in row.columnNames {
            let value: DatabaseValue = row[name]
            out[name] = jsonValue(value, type: resource.column(name)?.valueType)
        }
        return out
    }

    /// SQLite's value for a JSON value: objects and arrays as JSON text.
    static func databaseValue(_ value: JSONValue) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return (flag ? 1 : 0).databaseValue
        case .int(let number): return number.databaseValue
        case .double(let number): return number.databaseValue
        case .string(let text): return text.databaseValue
        case .array, .object: return String(decoding: value.encoded(), as: UTF8.self).databaseValue
        }
    }

    /// The JSON value of a stored one, by the server column's type.
    static func jsonValue(_ value: DatabaseValue, type: String?) -> JSONValue {
        switch value.storage {
        case .null: return .null
        case .int64(let number): return type == "boolean" ? .bool(number != 0) : .int(number)
        case .double(let number): return .double(number)
        case .string(let text):
            if type == "json" || type == "jsonb" || type?.hasSuffix("[]") == true {
                return (try? JSONValue.decode(Data(text.utf8))) ?? .string(text)
            }
            return .string(text)
        case .blob(let data): return .string(data.base64EncodedString())
        }
    }

    /// Writes `row` as the whole local row (insert or replace), keeping only the
    /// columns the local table has.
    static func put(_ db: Database, _ resource: ServerSchema.Resource, _ row: RowData) throws {
        let columns = try db.columns(in: resource.name).map(\.name).filter { row[$0] != nil }
        guard !columns.isEmpty else { return }
        let names = columns.map(LocalSchema.quote).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let arguments = StatementArguments(columns.map { databaseValue(row[$0] ?? .null) })
        // Cached: the same few statements run for every row of a sync, and
        // preparing them again each time was a noticeable share of an initial sync's CPU.
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO \(LocalSchema.quote(resource.name)) (\(names)) VALUES (\(marks))")
            .execute(arguments: arguments)
    }

    /// Writes the server's `row` unless the local row already has its revision
    /// or a later one: one statement, so that applying a row costs one write.
    /// A page's rows reuse their statement through `page`.
    static func putIfNewer(_ db: Database, _ resource: ServerSchema.Resource, _ row: RowData, page: PageWrites? = nil) throws {
        let columns = try db.columns(in: resource.name).map(\.name).filter { row[$0] != nil }
        guard columns.contains("id"), columns.contains("revision") else { return try put(db, resource, row) }
        func make() throws -> Statement {
            let names = columns.map(LocalSchema.quote).joined(separator: ", ")
            let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            let assignments = columns.filter { $0 != "id" }.map { "\(LocalSchema.quote($0)) = excluded.\(LocalSchema.quote($0))" }
                .joined(separator: ", ")
            let table = LocalSchema.quote(resource.name)
            return try db.cachedStatement(
                sql: """
                    INSERT INTO \(table) (\(names)) VALUES (\(marks))
                    ON CONFLICT ("id") DO UPDATE SET \(assignments)
                    WHERE \(table)."revision" IS NULL OR excluded."revision" > \(table)."revision"
                    """)
        }
        let statement = try page?.upsert(resource.name, columns: columns, make: make) ?? make()
        try statement.execute(arguments: StatementArguments(columns.map { databaseValue(row[$0] ?? .null) }))
    }

    static func remove(_ db: Database, _ resource: String, id: String) throws {
        try db.execute(sql: "DELETE FROM \(LocalSchema.quote(resource)) WHERE id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM ferry_base WHERE resource = ? AND id = ?", arguments: [resource, id])
        try db.cachedStatement(sql: "DELETE FROM ferry_subscription_row WHERE resource = ? AND id = ?").execute(arguments: [resource, id])
        try clearConflict(db, resource, id: id)
    }
}
