/// A sync-enabled table exposed at `/v1/<name>`.
public struct Resource: Sendable, Equatable, Codable {
    /// The table name, which is the resource's path segment.
    public let name: String
    /// The schema that holds the table.
    public let schema: String
    /// The columns in table order, with Ferry's hidden `_ferry_*` bookkeeping left out.
    public let columns: [Column]
    /// Column sets with a unique constraint or unique index (partial ones included).
    public let uniqueKeys: [[String]]
    /// Constraint and unique-index names mapped to their columns, so that a
    /// violation PostgreSQL reports by name can name the fields.
    public let constraints: [String: [String]]?

    /// The column named `name`, if the resource has one.
    public func column(_ name: String) -> Column? { columns.first { $0.name == name } }

    /// A join table links two or more resources: all its own columns are
    /// references, and together they are unique (e.g. `folder_sets`).
    public var isJoinTable: Bool {
        let own = columns.filter { !Column.syncColumns.contains($0.name) }
        let refs = own.filter { $0.references != nil }.map(\.name)
        guard refs.count >= 2, refs.count == own.count else { return false }
        return uniqueKeys.contains { Set($0) == Set(refs) }
    }

    /// Whether rows are ordered within a parent by a fractional-index `rank`.
    public var isRanked: Bool { column("rank") != nil }

    /// `"schema"."table"`, quoted for SQL. Names come only from the catalog.
    public var qualifiedName: String { SQLIdentifier.quote(schema) + "." + SQLIdentifier.quote(name) }

    enum CodingKeys: String, CodingKey { case name, schema, columns, uniqueKeys = "unique_keys", constraints }

    /// The columns a constraint or unique index covers; empty when unknown.
    public func columns(ofConstraint name: String) -> [String] { constraints?[name] ?? [] }
}

/// Quoting of SQL identifiers. Ferry takes identifiers only from the
/// introspected catalog, and still quotes them so that any name is safe.
public enum SQLIdentifier {
    /// `"name"` with embedded quotes doubled.
    public static func quote(_ name: String) -> String {
        // Bulk writes name their table per request (ferry.write_items); Foundation's
        // replacing goes through NSString even when there is nothing to replace.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
