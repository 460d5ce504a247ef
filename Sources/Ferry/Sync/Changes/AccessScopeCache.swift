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
        /// Each stream's read from its root (``ReadThrough/rooted(at:)``), by root table.
        let rooted: [String: (readThrough: ReadThrough, tables: [String])]
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

    /// The read of a stream rooted at `root` (``ReadThrough/rooted(at:)``), worked
    /// out once per load for the streams declared: every request of a stream plans
    /// from it, and so does every wake of its waiters (a thousand for a class's commit).
    func rooted(
        at root: String, for catalog: SchemaCatalog, generation: Int, schema: String, database: PostgresGateway
    ) throws -> (readThrough: ReadThrough, tables: [String])? {
        let entry = try entry(catalog, generation, schema, database)
        return entry.rooted[root] ?? entry.readThrough.rooted(at: root)
    }

    /// Read after the caller read `generation`, so an entry is never older than the load it is filed under.
    private func entry(_ catalog: SchemaCatalog, _ generation: Int, _ schema: String, _ database: PostgresGateway) throws -> Entry {
        if let hit = cached.withLock({ $0?.catalog == catalog && $0?.generation == generation ? $0 : nil }) { return hit }
        let readThrough = ReadThrough(
            catalog: catalog, readPaths: try ReadPath.load(schema: schema, catalog: catalog, database: database))
        let streams = try SyncStream.load(schema: schema, catalog: catalog, database: database)
        var rooted: [String: (readThrough: ReadThrough, tables: [String])] = [:]
        for stream in streams where rooted[stream.scope] == nil {
            rooted[stream.scope] = readThrough.rooted(at: stream.scope)
        }
        let loaded = Entry(
            catalog: catalog, generation: generation,
            scopes: try AccessScope.load(schema: schema, catalog: catalog, database: database),
            readThrough: readThrough, streams: streams, rooted: rooted)
        cached.withLock { $0 = loaded }
        return loaded
    }
}
