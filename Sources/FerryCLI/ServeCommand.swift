import ArgumentParser
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
            logs what `ferry check` finds in them (database.schema_check: refuse exits on an error), \
            and serves until SIGTERM or SIGINT, finishing in-flight requests first. SIGHUP re-reads the tables and fetches the identity providers' keys again.
            """
    )

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try options.load()
        LogSetup.bootstrap(config.logging)
        let logger = Logger(label: "ferry")
        if let refusal = ServeSchemaCheck.refusal(config, logger: logger) {
            logger.critical("cannot start: \(refusal)")
            LogSetup.flush()
            throw ExitCode.failure
        }
        let app: FerryApp
        do {
            app = try FerryApp(configuration: config, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            LogSetup.flush()
            throw ExitCode.failure
        }
        defer { app.close() }
        let server = app.makeServer()
        // A SIGHUP between the start and the handler below would end the process (its
        // default action) while it already answers: ignored until then, the tables were
        // just read anyway.
        signal(SIGHUP, SIG_IGN)
        do {
            try server.start()
        } catch {
            // Through the log, as every other reason not to start (a JSON log reads it too); a
            // bind's failure (the port taken, or not ours to use) names the settings that move it.
            let text = "\(error)"
            let hint = text.hasPrefix("bind(") ? "; listen.host and listen.port (FERRY_LISTEN_HOST, FERRY_LISTEN_PORT) choose another" : ""
            logger.critical("cannot start: \(text)\(hint)")
            LogSetup.flush()
            throw ExitCode.failure
        }
        let purger = TombstonePurger(
            pool: app.pool, retentionDays: config.tombstones.retentionDays,
            intervalSeconds: Double(config.tombstones.purgeIntervalSeconds), logger: logger)
        purger.start()
        defer { purger.stop() }
        SignalShutdown.install(for: server, onHangup: { app.reload() })
        logger.info("signals: SIGTERM or SIGINT stops, finishing in-flight requests; SIGHUP reads the tables again")
        server.waitUntilStopped()  // it logs "stopped"
        LogSetup.flush()
    }
}
