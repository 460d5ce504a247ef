import Ferry
import FerryHTTP
import FerryHTTPTestSupport
import Logging

/// Another Ferry process on an existing database: its own pool, memcached client and
/// HTTP server, as a second server of one deployment has. Stopping it leaves the
/// database alone (its ``TestServer`` owns it).
public final class TestFerryInstance: Sendable {
    public let app: FerryApp
    public let server: HTTPServer

    /// Starts Ferry on `database`; `configure` may adjust the configuration first.
    public convenience init(database: ScratchDatabase, _ configure: (inout FerryConfiguration) -> Void = { _ in }) throws {
        var logger = Logger(label: "ferry-test-instance")
        logger.logLevel = .error
        try self.init(database: database, logger: logger, configure)
    }

    /// Starts Ferry on `database` with the test defaults (ephemeral port, small
    /// pool, the shared memcached), adjusted by `configure`, logging to `logger`.
    init(database: ScratchDatabase, logger: Logger, _ configure: (inout FerryConfiguration) -> Void) throws {
        app = try FerryApp(configuration: Self.configuration(database, configure), logger: logger)
        var serverConfig = app.serverConfiguration
        serverConfig.accessLog = false
        let app = app
        do {
            server = try TestHTTPServer.start(serverConfig) { app.makeServer($0) }
        } catch {
            app.close()
            throw error
        }
    }

    /// The test defaults (ephemeral port, small pool, the shared memcached) on
    /// `database`, adjusted by `configure`.
    static func configuration(_ database: ScratchDatabase, _ configure: (inout FerryConfiguration) -> Void) -> FerryConfiguration {
        var config = FerryConfiguration()
        config.listen.port = 0
        config.listen.ioThreads = 2
        config.listen.workerThreads = 8
        config.database.url = database.appURL
        config.database.migrationURL = database.ownerURL
        config.database.poolSize = 4
        config.memcached.servers = [(try? TestEnvironment.memcached()) ?? "127.0.0.1:11211"]
        config.memcached.pollTimeoutMs = TestEnvironment.memcachedPollTimeoutMs
        configure(&config)
        return config
    }

    /// The bound port.
    public var port: Int { server.port }

    /// A new client connection to this instance.
    public func client() -> TestHTTPClient { TestHTTPClient(port: port) }

    /// Stops the server and closes the pool.
    public func stop() {
        server.shutdown()
        app.close()
    }
}
