import Ferry
import FerryHTTP
import FerryHTTPTestSupport
import FerryPostgres
import Foundation
import Logging

/// A real Ferry server for one test: a scratch database with the migrations
/// applied, the app on an ephemeral loopback port, and helpers to make users.
public final class TestServer: Sendable {
    public let database: ScratchDatabase
    public let app: FerryApp
    public let server: HTTPServer

    /// Starts Ferry on `database` (a new migrated scratch database on the
    /// shared test cluster by default); `configure` may adjust the configuration first.
    /// `logger` replaces the default one (warnings and worse) when a test reads the logs.
    public init(
        database: ScratchDatabase? = nil, logger: Logger? = nil, _ configure: (inout FerryConfiguration) -> Void = { _ in }
    ) throws {
        let database = try database ?? ScratchDatabase()
        self.database = database
        let logger =
            logger
            ?? {
                var logger = Logger(label: "ferry-test")
                logger.logLevel = .warning
                return logger
            }()
        do {
            let instance = try TestFerryInstance(database: database, logger: logger, configure)
            app = instance.app
            server = instance.server
        } catch {
            database.drop()
            throw error
        }
    }

    /// The bound port.
    public var port: Int { server.port }

    /// A new client connection to this server.
    public func client() -> TestHTTPClient { TestHTTPClient(port: port) }

    /// Creates a user directly in the database and returns a bearer token for it.
    public func user(_ name: String, password: String = "correct-horse") throws -> (id: String, token: String) {
        try database.user(name, password: password)
    }

    /// Runs SQL as the owner (bypassing RLS), e.g. to write "from psql".
    public func ownerQuery(_ sql: String, _ params: [String?] = []) throws -> PostgresResult {
        try database.ownerQuery(sql, params)
    }

    /// Stops the server, closes the pool and drops the database.
    public func stop() {
        server.shutdown()
        app.close()
        database.drop()
    }
}
