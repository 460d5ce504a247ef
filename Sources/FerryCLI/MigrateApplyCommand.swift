import ArgumentParser
import Ferry
import FerryMigrations
import FerryPostgres
import Foundation

/// `ferry migrate [apply]`: applies every pending migration, one transaction per file.
struct MigrateApplyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Apply pending migrations (the default).",
        discussion: "Exits 1 naming the file, line and PostgreSQL's message when a migration fails."
    )

    @OptionGroup var options: MigrateOptions

    @Flag(help: "List the files that would be applied, and run nothing.")
    var dryRun = false

    @Option(help: "Seconds to wait for another migration run to finish (default: wait as long as it takes).")
    var lockTimeout: Double?

    func validate() throws {
        if let lockTimeout, !(lockTimeout > 0 && lockTimeout.isFinite) {
            throw ValidationError("--lock-timeout must be a positive number of seconds")
        }
    }

    func run() throws {
        let migrator = try options.migrator(lockTimeout: lockTimeout)
        print("\(dryRun ? "dry run against" : "migrating") \(options.target(migrator))")
        do {
            let summary = try migrator.migrate(dryRun: dryRun) { event in
                print(event.line)
                fflush(nil)  // nil flushes every stream; progress must not wait for the buffer
            }
            print(summary.line)
        } catch {
            fflush(nil)  // nil flushes every stream; progress must not wait for the buffer
            throw failure(error)
        }
        if !dryRun { warnAboutTheSchema(migrator) }
    }

    /// `ferry check`'s catalog checks on what was just migrated, as warnings: the run has
    /// succeeded, and whether a finding may ship is CI's call (`ferry check` exits 1).
    private func warnAboutTheSchema(_ migrator: Migrator) {
        guard let config = try? options.configOptions.load() else { return }
        let role = URLComponents(string: config.database.url)?.user ?? "ferry_app"
        do {
            let connection = try PostgresConnection(url: migrator.databaseURL, applicationName: "ferry")
            defer { connection.close() }
            let facts = try SchemaFacts.load(servedSchema: config.database.schema, role: role, connection: connection)
            let findings = SchemaCheck.findings(facts)
            guard !findings.isEmpty else { return }
            for finding in findings { print("warning: \(finding.text)") }
            print("warning: \(findings.summary(tables: facts.tables.count)); `ferry check` says more, as the serve role")
        } catch {
            print("warning: the schema could not be checked after migrating: \(error)")
        }
    }
}
