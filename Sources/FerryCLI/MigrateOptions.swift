import ArgumentParser
import Ferry
import FerryMigrations
import Foundation

/// Options shared by `ferry migrate` and `ferry migrate status`.
struct MigrateOptions: ParsableArguments {
    @OptionGroup var configOptions: ConfigOptions

    @Option(
        name: .customLong("dir"),
        help: "The app's migrations directory; overrides database.migrations_dir. Ferry's own are built in.")
    var directory: String?

    @Option(
        name: .customLong("database-url"),
        help: "The owner role's URL or conninfo; overrides database.migration_url.")
    var databaseURL: String?

    /// The target database, Ferry's own files and the app's, or exits 1 (78 for a bad
    /// configuration) with the reason on standard error.
    func migrator(lockTimeout: Double? = nil) throws -> Migrator {
        // The configuration is read only for what the command line leaves open.
        let config = directory == nil || databaseURL == nil ? try configOptions.load() : nil
        let url = databaseURL ?? config?.database.migrationURL ?? ""
        let appDirectory = directory ?? config.map(\.database.migrationsDir).flatMap { $0.isEmpty ? nil : resolved($0) }
        do {
            return Migrator(
                databaseURL: url, core: try MigrationFile.core(), repeatable: try RepeatableFile.core(),
                app: try appDirectory.map { directory throws(MigrationError) in try AppMigrations.load(directory: directory) },
                lockTimeout: lockTimeout)
        } catch {
            throw failure(error)
        }
    }

    /// `database.migrations_dir` as a path: a relative one in a configuration file is
    /// relative to that file (as `ferry init` writes it); from the environment, or with
    /// no file, to the working directory.
    private func resolved(_ directory: String) -> String {
        guard !directory.hasPrefix("/"), let file = configOptions.config,
            ProcessInfo.processInfo.environment["FERRY_DATABASE_MIGRATIONS_DIR"] == nil
        else { return directory }
        let base = (file as NSString).deletingLastPathComponent
        return base.isEmpty ? directory : (base as NSString).appendingPathComponent(directory)
    }

    /// `<database> (Ferry's <n> + <r> repeatable and <m> files in <dir>)`, for the first line of
    /// output; no password.
    func target(_ migrator: Migrator) -> String {
        let app = migrator.app.map { " and \(Self.files($0.files.count)) in \($0.directory)" } ?? ", no app directory"
        let repeatable = migrator.repeatable.isEmpty ? "" : " + \(migrator.repeatable.count) repeatable"
        return "\(DatabaseURLRedaction.redacted(migrator.databaseURL)) (Ferry's \(migrator.core.count)\(repeatable)\(app))"
    }

    private static func files(_ count: Int) -> String { "\(count) file\(count == 1 ? "" : "s")" }
}

/// Prints `ferry: <error>` to standard error and returns exit code 1 to throw.
func failure(_ error: MigrationError) -> ExitCode {
    FileHandle.standardError.write(Data("ferry: \(error)\n".utf8))
    return ExitCode.failure
}
