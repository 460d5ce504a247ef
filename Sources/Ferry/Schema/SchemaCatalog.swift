import FerryBase

/// The set of resources Ferry serves, read from the live catalog.
public struct SchemaCatalog: Sendable, Equatable {
    /// Route names Ferry itself owns under `/v1`; tables with these names are not exposed.
    public static let reservedNames: Set<String> = ["auth", "batch", "changes", "users"]

    /// The resources by name.
    public let resources: [String: Resource]
    /// Sync-enabled tables that were left out because their names collide with Ferry's routes.
    public let skipped: [String]
    /// Each resource's reference checks, derived once from the catalog (see `references(for:)`).
    let referenceChecks: [String: ReferenceCheck]

    /// A catalog from introspected tables, leaving out reserved names.
    public init(tables: [Resource]) {
        var resources: [String: Resource] = [:]
        var skipped: [String] = []
        for table in tables {
            if Self.reservedNames.contains(table.name) { skipped.append(table.name) } else { resources[table.name] = table }
        }
        self.resources = resources
        self.skipped = skipped.sorted()
        referenceChecks = resources.mapValues { ReferenceCheck(resource: $0, resources: resources) }
    }

    /// The resource names in sorted order.
    public var names: [String] { resources.keys.sorted() }

    /// The resource called `name`, if exposed.
    public subscript(name: String) -> Resource? { resources[name] }
}

/// The catalog currently in force, swapped whole on reload (SIGHUP), so a
/// request always sees one consistent version.
///
/// Every request reads it; only a reload writes, so readers share the lock.
public final class SchemaCache: Sendable {
    private let current: Locked<SchemaCatalog>

    /// A cache holding `catalog`.
    public init(_ catalog: SchemaCatalog) { current = Locked(catalog) }

    /// The catalog in force now.
    public var catalog: SchemaCatalog { current.withLock { $0 } }

    /// Replaces the catalog; returns whether it changed.
    @discardableResult
    public func replace(with catalog: SchemaCatalog) -> Bool {
        current.withLock { old in
            defer { old = catalog }
            return old != catalog
        }
    }
}

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
    public var qualifiedName: String { SQL.id(schema) + "." + SQL.id(name) }

    enum CodingKeys: String, CodingKey { case name, schema, columns, uniqueKeys = "unique_keys", constraints }

    /// The columns a constraint or unique index covers; empty when unknown.
    public func columns(ofConstraint name: String) -> [String] { constraints?[name] ?? [] }
}
