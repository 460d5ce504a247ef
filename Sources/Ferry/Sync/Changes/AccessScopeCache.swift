import FerryBase

/// The access scopes, read once per catalog version (they change only with
/// migrations, which also change or reload the catalog).
final class AccessScopeCache: Sendable {
    private let cached = Locked<(catalog: SchemaCatalog, scopes: [AccessScope])?>(nil)

    func scopes(for catalog: SchemaCatalog, schema: String, database: PostgresGateway) throws -> [AccessScope] {
        if let hit = cached.withLock({ $0?.catalog == catalog ? $0?.scopes : nil }) { return hit }
        let loaded = try AccessScope.load(schema: schema, catalog: catalog, database: database)
        cached.withLock { $0 = (catalog, loaded) }
        return loaded
    }
}
