import Foundation
import GRDB

/// The local copy of what one user may see on one server: one SQLite file.
///
/// The app reads and writes only here; nothing waits on the network. Every
/// write changes the row and records what the server has not seen yet (an
/// outbox entry with its own operation id, and the row's base version) in the
/// same SQLite transaction, so a crash keeps both or neither: triggers on each
/// synced table do it (``LocalTriggers``), so a write the app makes with GRDB
/// on ``database`` is recorded like one made through the store. ``SyncEngine``
/// does the rest.
///
/// Tables: one per resource of `GET /v1`, plus `ferry_base` (each row's last
/// server version, the merge's base), `ferry_outbox` (pending operations),
/// `ferry_state` (the feed cursor and the schema), and `ferry_subscription`
/// with `ferry_subscription_row` (streams subscribed to, their cursors, the
/// rows each brought).
public final class FerryStore: Sendable {
    /// The SQLite database. The app reads it with GRDB as it likes, and may
    /// write the synced tables with GRDB records or SQL too: each write is
    /// checked and recorded for upload in the same transaction.
    ///
    /// A file is a GRDB `DatabasePool` (WAL): reads run beside writes and
    /// never wait for them, so the app's screen reads stay quick while a sync
    /// applies a page of 1,000 rows. `":memory:"` is a `DatabaseQueue`.
    public let database: any DatabaseWriter
    /// Who is writing, as the triggers ask it.
    let context: WriteContext

    /// How a store file is opened: the pool, or the serial queue FerryKit
    /// used before (kept for the benchmark that compares them).
    enum Access { case pool, queue }

    /// Opens (or creates) the store at `path`; `":memory:"` for a throwaway one.
    public convenience init(path: String) throws {
        try self.init(path: path, access: path == ":memory:" ? .queue : .pool)
    }

    init(path: String, access: Access) throws {
        let context = WriteContext()
        var configuration = Configuration()
        configuration.prepareDatabase { db in context.register(on: db) }
        if path == ":memory:" {
            database = try DatabaseQueue(configuration: configuration)
        } else if access == .queue {
            database = try DatabaseQueue(path: path, configuration: configuration)
        } else {
            database = try DatabasePool(path: path, configuration: configuration)
        }
        self.context = context
        try context.asFerry { try Self.migrator.migrate(database) }
        try ferryWrite { db in
            // An upload in flight when the process died was either applied or not;
            // sending it again with the same Idempotency-Key is right either way.
            try db.execute(
                sql: OutboxState.statement(.reopened, where: "true"), arguments: Self.outcomeArguments(.reopened, error: nil, nextAttempt: nil))
            // A stream that was downloading waits its turn again.
            try db.execute(sql: "UPDATE ferry_subscription SET status = 'queued' WHERE status = 'syncing'")
            // A file written before the triggers existed, or by an older FerryKit, gets today's.
            if let schema = try Self.schema(db) { try Self.installTriggers(db, schema) }
        }
    }

    /// A write of FerryKit's own (applying the server's rows, the outbox's
    /// bookkeeping): the triggers neither check nor record it.
    func ferryWrite<T>(_ body: (Database) throws -> T) throws -> T {
        try database.write { db in try context.asFerry { try body(db) } }
    }

    /// The file name for a (server, user) pair: one store each, so that two
    /// accounts on one device never share rows or an outbox.
    public static func fileName(server: URL, userID: String) -> String {
        let text = server.absoluteString + "\n" + userID
        return "ferry-" + UploadPlanner.digest(text) + ".sqlite"
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("ferry 1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE ferry_base (resource TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL,
                                             row TEXT NOT NULL, PRIMARY KEY (resource, id));
                    CREATE TABLE ferry_outbox (sequence INTEGER PRIMARY KEY AUTOINCREMENT, op_id TEXT NOT NULL UNIQUE,
                                               resource TEXT NOT NULL, row_id TEXT NOT NULL, kind TEXT NOT NULL,
                                               fields TEXT NOT NULL, state TEXT NOT NULL DEFAULT \(OutboxState.pending.sql),
                                               attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL, last_error TEXT);
                    CREATE INDEX ferry_outbox_row ON ferry_outbox (resource, row_id);
                    CREATE TABLE ferry_state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    """)
        }
        // When each operation was recorded (how long the queue has waited), the
        // app's group it uploads with (one `/v1/batch`), and the rows whose
        // pending edits came out of a merge with conflicting fields.
        migrator.registerMigration("ferry 2") { db in
            try db.execute(sql: "ALTER TABLE ferry_outbox ADD COLUMN created_at REAL")
            try db.execute(sql: "ALTER TABLE ferry_outbox ADD COLUMN group_id TEXT")
            try db.execute(
                sql: "CREATE TABLE ferry_conflict (resource TEXT NOT NULL, id TEXT NOT NULL, fields TEXT NOT NULL, PRIMARY KEY (resource, id))")
        }
        // Rows the store held as synced when an initial sync took its cursor:
        // each must reappear in an Index page, or the server no longer has it.
        migrator.registerMigration("ferry 3") { db in
            try db.execute(sql: "CREATE TABLE ferry_unconfirmed (resource TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (resource, id))")
        }
        // Only FerryKit writes the outbox; the synced tables' own triggers come with the schema.
        migrator.registerMigration("ferry 4") { db in
            for statement in LocalTriggers.outboxGuards { try db.execute(sql: statement) }
        }
        // Subscriptions to streams, and the rows each one brought (FerryStore+Subscriptions.swift).
        migrator.registerMigration("ferry 5") { db in
            try db.execute(sql: subscriptionTables)
        }
        // The rows a subscription held when its stream started over after a 410,
        // until a page of the new download brings each again (RestartSweep.swift).
        migrator.registerMigration("ferry 6") { db in
            try db.execute(sql: streamUnconfirmedTable)
        }
        return migrator
    }

    // MARK: Schema

    /// The server schema the local tables follow, once one was applied.
    public func schema() throws -> ServerSchema? {
        try database.read { db in try Self.schema(db) }
    }

    static func schema(_ db: Database) throws -> ServerSchema? {
        // Cached: every row applied looks its resource up, and preparing the
        // statement each time (GRDB's authorizer included) was a tenth of a stream page's CPU.
        guard let text = try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM ferry_state WHERE key = 'schema'")) else { return nil }
        if let cached = decodedSchemas.get(text) { return cached }
        let schema = try JSONDecoder().decode(ServerSchema.self, from: Data(text.utf8))
        decodedSchemas.set(text, schema)
        return schema
    }

    /// Every row applied or written looks its resource up; decoding the stored
    /// schema each time was most of an initial sync's CPU.
    static let decodedSchemas = SchemaMemo()
}

/// The last decoded schema, by its stored text.
///
/// `@unchecked Sendable`: its one mutable field is only touched under `lock`
/// (`Synchronization.Mutex` would need macOS 15; FerryKit supports 14).
final class SchemaMemo: @unchecked Sendable {
    private let lock = NSLock()
    private var entry: (text: String, schema: ServerSchema)?

    func get(_ text: String) -> ServerSchema? {
        lock.lock()
        defer { lock.unlock() }
        return entry?.text == text ? entry?.schema : nil
    }

    func set(_ text: String, _ schema: ServerSchema) {
        lock.lock()
        defer { lock.unlock() }
        entry = (text, schema)
    }
}

extension FerryStore {

    /// Brings the local tables up to `schema` (``LocalSchema``): new tables and
    /// columns are added; nothing is dropped, so unsynced edits survive a
    /// server schema change.
    public func apply(schema: ServerSchema) throws {
        try ferryWrite { db in
            var existing: [String: [String]] = [:]
            for resource in schema.resources where try db.tableExists(resource.name) {
                existing[resource.name] = try db.columns(in: resource.name).map(\.name)
            }
            for statement in LocalSchema.migrations(to: schema, existing: existing) + LocalSchema.indexes(for: schema) {
                try db.execute(sql: statement)
            }
            try Self.installTriggers(db, schema)
            let encoded = String(decoding: try JSONEncoder().encode(schema), as: UTF8.self)
            try db.execute(
                sql: "INSERT INTO ferry_state (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                arguments: [encoded])
        }
    }

    /// (Re)installs every synced table's triggers for `schema`.
    static func installTriggers(_ db: Database, _ schema: ServerSchema) throws {
        for resource in schema.resources where try db.tableExists(resource.name) {
            for statement in LocalTriggers.statements(for: resource) { try db.execute(sql: statement) }
        }
    }

    static func resource(_ db: Database, _ name: String) throws -> ServerSchema.Resource {
        guard let resource = try schema(db)?[name] else { throw FerryKitError.unknownResource(name) }
        return resource
    }
}
