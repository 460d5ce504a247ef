import FerryPostgres
import FerryBase

/// The access scopes, read once per catalog version (they change only with
/// migrations, which also change or reload the catalog).
final class AccessScopeCache: Sendable {
    private let cached = Locked<(catalog: SchemaCatalog, scopes: [AccessScope])?>(nil)

    func scopes(for catalog: SchemaCatalog, schema: String, database: Database) throws -> [AccessScope] {
        if let hit = cached.withLock({ $0?.catalog == catalog ? $0?.scopes : nil }) { return hit }
        let loaded: [AccessScope]
        do {
            loaded = try database.pool.withConnection {
                try AccessScope.load(schema: schema, catalog: catalog, connection: $0)
            }
        } catch let error as PostgresError {
            throw DatabaseFailure.map(error, statementOffset: 0)
        }
        cached.withLock { $0 = (catalog, loaded) }
        return loaded
    }
}
