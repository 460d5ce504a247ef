import ArgumentParser
import Dispatch
import Ferry
import FerryHTTP
import Foundation
import Logging

/// `ferry serve`: runs the HTTP API until SIGTERM or SIGINT.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API.",
        discussion: """
            Connects to PostgreSQL as database.url, reads the sync-enabled tables of database.schema, \
            and serves until SIGTERM or SIGINT, finishing in-flight requests first. SIGHUP re-reads the tables.
            """
    )

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try options.load()
        LogSetup.bootstrap(config.logging)
        let logger = Logger(label: "ferry")
        let app: FerryApp
        do {
            app = try FerryApp(configuration: config, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode.failure
        }
        defer { app.close() }
        let server = app.makeServer()
        try server.start()
        let signals = ServeSignals(server: server, app: app, logger: logger)
        let sources = signals.install()
        try withExtendedLifetime(sources) { try server.run() }
        logger.info("stopped")
        LogSetup.flush()
    }
}

/// SIGTERM and SIGINT shut down gracefully; SIGHUP reloads the schema.
final class ServeSignals: Sendable {
    let server: HTTPServer
    let app: FerryApp
    let logger: Logger
    private let queue = DispatchQueue(label: "ferry.signals")

    init(server: HTTPServer, app: FerryApp, logger: Logger) {
        self.server = server
        self.app = app
        self.logger = logger
    }

    /// Installs the handlers; the caller keeps the returned sources alive
    /// while serving, since a released source stops delivering.
    func install() -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for signo in [SIGTERM, SIGINT, SIGHUP] {
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: queue)
            source.setEventHandler { [server, app, logger] in
                if signo == SIGHUP {
                    app.reloadSchema()
                } else {
                    logger.info("shutting down on signal \(signo)")
                    server.beginShutdown()
                }
            }
            source.resume()
            sources.append(source)
        }
        return sources
    }
}
