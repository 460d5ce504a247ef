/// The local tables a server schema needs, as SQL: pure, so a schema change can
/// be checked without a database.
///
/// New resources become tables and new columns are added. Nothing is ever
/// dropped or retyped: a column the server no longer has may still hold a local
/// edit not yet uploaded, and SQLite's dynamic typing stores whatever the
/// server sends next.
public enum LocalSchema {
    /// SQLite's storage class for a PostgreSQL type.
    static func affinity(_ type: String) -> String {
        switch type {
        case "smallint", "integer", "bigint", "boolean": "INTEGER"
        case "real", "double precision": "REAL"
        case _ where type.hasPrefix("numeric"): "REAL"
        default: "TEXT"
        }
    }

    /// A quoted SQLite identifier.
    static func quote(_ name: String) -> String {
        // Applying a row quotes each of its columns a few times, and Foundation's
        // replacingOccurrences (NSString on Linux) was the largest single cost
        // of an initial sync's applies (bench/ferrykit/README.md); a name with a double
        // quote in it is rare. Looked for in its bytes: `name.contains("\"")` is
        // Foundation's `contains` of a string, an NSString search on Linux too.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The statements that bring `existing` (table name to its column names) up
    /// to `schema`.
    public static func migrations(to schema: ServerSchema, existing: [String: [String]]) -> [String] {
        var statements: [String] = []
        for resource in schema.resources {
            guard resource.column("id") != nil else { continue }
            if let columns = existing[resource.name] {
                for column in resource.columns where !columns.contains(column.name) {
                    statements.append("ALTER TABLE \(quote(resource.name)) ADD COLUMN \(quote(column.name)) \(affinity(column.valueType))")
                }
            } else {
                let columns = resource.columns.map { column in
                    "\(quote(column.name)) \(affinity(column.valueType))" + (column.name == "id" ? " PRIMARY KEY NOT NULL" : "")
                }
                statements.append("CREATE TABLE \(quote(resource.name)) (\(columns.joined(separator: ", ")))")
            }
        }
        return statements
    }

    /// The indexes an app's usual reads need, each created if missing: a
    /// ranked resource's rows in order within their scope (a set's terms, by
    /// rank), and every reference (a folder's links). Without them, reading
    /// one set's terms scans every term the user has.
    public static func indexes(for schema: ServerSchema) -> [String] {
        var statements: [String] = []
        for resource in schema.resources where resource.column("id") != nil {
            var covered = Set<String>()
            if resource.ranked == true, resource.column("rank") != nil {
                let columns = (resource.rankScope.flatMap { resource.column($0)?.name }.map { [$0] } ?? []) + ["rank"]
                statements.append(index(resource.name, columns))
                covered.formUnion(columns.prefix(1))
            }
            for column in resource.columns where column.references != nil && !covered.contains(column.name) {
                statements.append(index(resource.name, [column.name]))
            }
        }
        return statements
    }

    static func index(_ table: String, _ columns: [String]) -> String {
        "CREATE INDEX IF NOT EXISTS \(quote("ferry_index_\(table)_" + columns.joined(separator: "_"))) ON \(quote(table)) "
            + "(\(columns.map(quote).joined(separator: ", ")))"
    }
}
