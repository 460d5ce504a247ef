import Ferry
import FerryPostgres
import Logging

/// Ferry on a scratch database with no listening socket, for router-level
/// tests: ``router`` calls the middleware chain and the handlers directly
/// (``RouterTestClient``). Use ``TestServer`` when the test needs the wire.
public final class TestApp: Sendable {
    public let database: ScratchDatabase
    public let app: FerryApp
    public let router: RouterTestClient

    /// Ferry on `database` (a new migrated scratch database by default) with the
    /// test defaults, adjusted by `configure`.
    public init(database: ScratchDatabase? = nil, _ configure: (inout FerryConfiguration) -> Void = { _ in }) throws {
        let database = try database ?? ScratchDatabase()
        self.database = database
        var logger = Logger(label: "ferry-test-app")
        logger.logLevel = .warning
        do {
            app = try FerryApp(configuration: TestFerryInstance.configuration(database, configure), logger: logger)
        } catch {
            database.drop()
            throw error
        }
        router = RouterTestClient(app: app)
    }

    /// Creates a user directly in the database and returns a bearer token for it.
    public func user(_ name: String, password: String = "correct-horse") throws -> (id: String, token: String) {
        try database.user(name, password: password)
    }

    /// Runs SQL as the owner (bypassing RLS), e.g. to write "from psql".
    public func ownerQuery(_ sql: String, _ params: [String?] = []) throws -> PostgresResult {
        try database.ownerQuery(sql, params)
    }

    /// Closes the pool and drops the database.
    public func stop() {
        app.close()
        database.drop()
    }
}
