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
    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The statements that bring `existing` (table name to its column names) up
    /// to `schema`.
    public static func migrations(to schema: ServerSchema, existing: [String: [String]]) -> [String] {
        var statements: [String] = []
        for resource in schema.resources {
            guard resource.column("id") != nil else { continue }
            if let columns = existing[resource.name] {
                for column in resource.columns where !columns.contains(column.name) {
                    statements.append("ALTER TABLE \(quote(resource.name)) ADD COLUMN \(quote(column.name)) \(affinity(column.type))")
                }
            } else {
                let columns = resource.columns.map { column in
                    "\(quote(column.name)) \(affinity(column.type))" + (column.name == "id" ? " PRIMARY KEY NOT NULL" : "")
                }
                statements.append("CREATE TABLE \(quote(resource.name)) (\(columns.joined(separator: ", ")))")
            }
        }
        return statements
    }
}
