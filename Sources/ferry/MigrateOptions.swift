import ArgumentParser
import Ferry
import FerryMigrations
import Foundation

/// Options shared by `ferry migrate` and `ferry migrate status`.
struct MigrateOptions: ParsableArguments {
    @OptionGroup var configOptions: ConfigOptions

    @Option(name: .customLong("dir"), help: "The migrations directory.")
    var directory: String = MigrationDirectory.defaultPath

    @Option(name: .customLong("database-url"),
            help: "The owner role's URL or conninfo; overrides database.migration_url.")
    var databaseURL: String?

    /// The target database and the files to apply, or exits 1 (78 for a bad configuration)
    /// with the reason on standard error.
    func migrator(lockTimeout: Double? = nil) throws -> Migrator {
        let url: String
        if let databaseURL {
            url = databaseURL
        } else {
            url = try configOptions.load().database.migrationURL
        }
        do {
            let files = try MigrationDirectory.load(path: directory)
            return Migrator(databaseURL: url, files: files, lockTimeout: lockTimeout)
        } catch {
            throw failure(error)
        }
    }

    /// `<database> (<n> files in <dir>)`, for the first line of output; no password.
    func target(_ migrator: Migrator) -> String {
        let count = migrator.files.count
        return "\(DatabaseURLRedaction.redacted(migrator.databaseURL)) "
            + "(\(count) file\(count == 1 ? "" : "s") in \(directory))"
    }
}

/// Prints `ferry: <error>` to standard error and returns exit code 1 to throw.
func failure(_ error: MigrationError) -> ExitCode {
    FileHandle.standardError.write(Data("ferry: \(error)\n".utf8))
    return ExitCode.failure
}
