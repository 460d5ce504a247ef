import FerryBase

/// The access scopes and read paths, read once per schema load: they change
/// only with migrations, after which every instance reloads its schema
/// (``SchemaCache/generation`` moves even when the tables did not change, as
/// when a migration only adds a policy).
final class AccessScopeCache: Sendable {
    private struct Entry {
        let catalog: SchemaCatalog
        let generation: Int
        let scopes: [AccessScope]
        let readThrough: ReadThrough
        let streams: [SyncStream]
    }

    private let cached = Locked<Entry?>(nil)

    func scopes(for catalog: SchemaCatalog, generation: Int, schema: String, database: PostgresGateway) throws -> [AccessScope] {
        try entry(catalog, generation, schema, database).scopes
    }

    /// The read paths, worked out for the catalog once per load.
    func readThrough(for catalog: SchemaCatalog, generation: Int, schema: String, database: PostgresGateway) throws -> ReadThrough {
        try entry(catalog, generation, schema, database).readThrough
    }

    /// The streams a device may subscribe to (core 0025).
    func streams(for catalog: SchemaCatalog, generation: Int, schema: String, database: PostgresGateway) throws -> [SyncStream] {
        try entry(catalog, generation, schema, database).streams
    }

    /// Read after the caller read `generation`, so an entry is never older than the load it is filed under.
    private func entry(_ catalog: SchemaCatalog, _ generation: Int, _ schema: String, _ database: PostgresGateway) throws -> Entry {
        if let hit = cached.withLock({ $0?.catalog == catalog && $0?.generation == generation ? $0 : nil }) { return hit }
        let loaded = Entry(
            catalog: catalog, generation: generation,
            scopes: try AccessScope.load(schema: schema, catalog: catalog, database: database),
            readThrough: ReadThrough(
                catalog: catalog,
                readPaths: try ReadPath.load(schema: schema, catalog: catalog, database: database)),
            streams: try SyncStream.load(schema: schema, catalog: catalog, database: database))
        cached.withLock { $0 = loaded }
        return loaded
    }
}
