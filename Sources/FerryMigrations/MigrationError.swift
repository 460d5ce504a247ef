import FerryPostgres

/// Why `ferry migrate` could not read its files, reach the database, or apply a file.
///
/// Every description names the file or directory concerned and never contains a
/// password.
public enum MigrationError: Error, Sendable, CustomStringConvertible {
    /// The migrations directory is missing, not a directory, or cannot be listed.
    case directoryUnreadable(path: String, reason: String)
    /// A `.sql` file whose name is not `NNNN_name.sql`.
    case badFileName(fileName: String, directory: String)
    /// Two files share a version number.
    case duplicateVersion(version: Int, fileNames: [String])
    /// A file that cannot be read, is not UTF-8, or contains a NUL byte.
    case unreadableFile(path: String, reason: String)
    /// Applied files whose contents changed since; nothing was run.
    case checksumMismatch([ChangedMigration])
    /// The database's app migrations share no file with the directory, which holds older
    /// ones: it is another app's database (`MigrationPlan.foreignHistory`); nothing was run.
    case foreignHistory(directory: String, applied: [AppliedMigration], older: [String])
    /// A file failed and was rolled back; files before it stay applied.
    case migrationFailed(MigrationFailure)
    /// Connecting, locking or bookkeeping failed (not a migration script).
    case database(operation: String, error: PostgresError)
    /// A pending file contains a statement that begins or ends a transaction; nothing was run.
    case transactionStatement(fileName: String, line: Int, statement: String)
    /// The file ended the transaction it runs in (a COMMIT, ROLLBACK or END of its own).
    case transactionControl(fileName: String)
    /// Another run held the migration lock for longer than the allowed wait.
    case lockTimeout(seconds: Double)
    /// An app migration created, altered or dropped objects in schema `ferry`; it was
    /// rolled back. `objects` names each (`function ferry.f(integer) created`).
    case appTouchesFerrySchema(fileName: String, objects: [String])
    /// A history from before the core and app tracks were split records one of Ferry's
    /// own versions with a checksum Ferry never shipped; nothing was changed.
    case legacyHistory(fileName: String, version: Int, checksum: String)

    /// An applied file whose bytes no longer match what was applied.
    public struct ChangedMigration: Sendable, Equatable {
        /// The file on disk now.
        public var fileName: String
        /// The checksum recorded when it was applied.
        public var appliedChecksum: String
        /// The checksum of the file on disk now.
        public var currentChecksum: String

        public init(fileName: String, appliedChecksum: String, currentChecksum: String) {
            self.fileName = fileName
            self.appliedChecksum = appliedChecksum
            self.currentChecksum = currentChecksum
        }
    }

    public var description: String {
        switch self {
        case let .directoryUnreadable(path, reason):
            return "migrations directory \(path): \(reason)"
        case let .badFileName(fileName, directory):
            return "\(directory)/\(fileName): a migration file must be named NNNN_name.sql "
                + "(1-9 digits, an underscore, then letters, digits, _ or -)"
        case let .duplicateVersion(version, fileNames):
            return "migration version \(version) is used by more than one file: "
                + fileNames.joined(separator: ", ")
        case let .unreadableFile(path, reason):
            return "migration file \(path) cannot be used: \(reason)"
        case let .checksumMismatch(changed):
            let lines = changed.map {
                "  \($0.fileName): applied \(Self.abbreviated($0.appliedChecksum)), now \(Self.abbreviated($0.currentChecksum))"
            }
            return "refusing to migrate: \(changed.count == 1 ? "an applied migration has" : "applied migrations have") "
                + "changed since \(changed.count == 1 ? "it was" : "they were") applied (nothing was run):\n"
                + lines.joined(separator: "\n")
                + "\nRestore the original file\(changed.count == 1 ? "" : "s") and put the change in a new migration."
        case let .foreignHistory(directory, applied, older):
            let names =
                applied.count <= 3
                ? applied.map(\.fileName).joined(separator: ", ")
                : "\(applied[0].fileName) … \(applied[applied.count - 1].fileName)"
            return "refusing to migrate: this database holds another app's migrations (\(applied.count) applied: \(names)), "
                + "none of them in \(directory), whose \(older.joined(separator: ", ")) \(older.count == 1 ? "is" : "are") older "
                + "than them (nothing was run). Give this app a database of its own (database.url and "
                + "database.migration_url; `ferry init DIR --database NAME` prints the createdb line), or migrate this "
                + "database with the migrations directory of the app it belongs to."
        case let .migrationFailed(failure):
            return failure.description
        case let .database(operation, error):
            return "\(operation) failed: \(error.message)"
                + (error.sqlState.map { " (SQLSTATE \($0))" } ?? "")
        case let .transactionStatement(fileName, line, statement):
            return "migration \(fileName) has a \(statement) statement at line \(line) (nothing was run): "
                + "ferry runs each file in a transaction of its own, so files must not begin, commit or roll back "
                + "transactions. Remove it."
        case let .transactionControl(fileName):
            return "migration \(fileName) ended its transaction itself (COMMIT, ROLLBACK or END in the file), "
                + "so it was not recorded as applied and the statements before that point may have been committed. "
                + "Remove transaction control from the file: ferry runs each file in a transaction of its own."
        case let .lockTimeout(seconds):
            return "gave up after waiting \(Self.seconds(seconds)) for another migration to finish"
        case let .appTouchesFerrySchema(fileName, objects):
            let shown = objects.prefix(8).map { "  \($0)" }
            let more = objects.count > 8 ? ["  and \(objects.count - 8) more"] : []
            return "app migration \(fileName) changes schema ferry, which belongs to Ferry "
                + "(it was rolled back; nothing of it was applied):\n"
                + (shown + more).joined(separator: "\n")
                + "\nKeep the app's objects in its own schema; Ferry's schema changes only with Ferry's built-in "
                + "migrations. Calling Ferry's functions (ferry.enable_sync, the sync rules) and writing rows is fine."
        case let .legacyHistory(fileName, version, checksum):
            return "ferry.schema_migrations is from before Ferry's migrations and the app's were split, and records "
                + "\(fileName) (version \(version)) with checksum \(Self.abbreviated(checksum)), which is not a file "
                + "Ferry shipped, so Ferry cannot tell its part from the app's (nothing was changed). Restore the "
                + "shipped file, or put its changes in a migration of the app's own, then run again."
        }
    }

    /// The first 12 hex digits of a checksum, enough to tell two apart at a glance.
    public static func abbreviated(_ checksum: String) -> String { String(checksum.prefix(12)) }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
