/// Progress of a migration run, reported as it happens.
public enum MigrationEvent: Sendable, Equatable {
    /// Another run holds the migration lock; this one waits for it.
    case waitingForLock
    /// An applied version has no file on disk any more (a warning; the run goes on).
    case missingFile(AppliedMigration)
    /// A file was applied and committed.
    case applied(fileName: String, durationMs: Int)
    /// Dry run: this file would be applied.
    case wouldApply(fileName: String)

    /// The line `ferry migrate` prints for the event.
    public var line: String {
        switch self {
        case .waitingForLock:
            return "waiting for another migration to finish"
        case let .missingFile(record):
            return "warning: \(record.fileName) (version \(record.version)) was applied at \(record.appliedAt) "
                + "but is missing from the migrations directory"
        case let .applied(fileName, durationMs):
            return "applied \(fileName) in \(durationMs) ms"
        case let .wouldApply(fileName):
            return "would apply \(fileName)"
        }
    }
}
