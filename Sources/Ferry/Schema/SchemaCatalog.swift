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
