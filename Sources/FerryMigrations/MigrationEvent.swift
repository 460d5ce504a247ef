/// Progress of a migration run, reported as it happens.
public enum MigrationEvent: Sendable, Equatable {
    /// Another run holds the migration lock; this one waits for it.
    case waitingForLock
    /// The history from before the tracks were split was divided between them: `moved`
    /// rows became the app's, `divided` rows became one of each. Nothing was applied.
    case dividedLegacyHistory(moved: Int, divided: Int)
    /// An applied version has no file any more (a warning; the run goes on).
    case missingFile(AppliedMigration)
    /// The core track's repeatable files were not applied: the database has core
    /// versions this ferry does not know, so its functions are newer than these files.
    case repeatablesSkipped(newestApplied: Int)
    /// A file was applied and committed.
    case applied(track: MigrationTrack, fileName: String, durationMs: Int)
    /// Dry run: this file would be applied.
    case wouldApply(track: MigrationTrack, fileName: String)
    /// An app file left a ruled table unlike its sync rule, and the rule put it back
    /// (a warning: the file holds a mistake the developer should learn of).
    case repaired(fileName: String, table: String, repair: String)

    /// The line `ferry migrate` prints for the event.
    public var line: String {
        switch self {
        case .waitingForLock:
            return "waiting for another migration to finish"
        case let .dividedLegacyHistory(moved, divided):
            return "divided ferry.schema_migrations into Ferry's track and the app's: \(moved) rows moved to the app's, "
                + "\(divided) split in two; nothing applied again"
        case let .missingFile(record) where record.track == .core:
            return "warning: core \(record.fileName) (version \(record.version)) was applied at \(record.appliedAt) "
                + "but is not built into this ferry: a newer Ferry migrated this database"
        case let .missingFile(record):
            return "warning: app \(record.fileName) (version \(record.version)) was applied at \(record.appliedAt) "
                + "but is missing from the migrations directory"
        case let .repeatablesSkipped(newest):
            return "warning: core version \(newest) is applied but not built into this ferry, so its repeatable files "
                + "(migrations/functions) were not applied: they would put older functions over a newer schema"
        case let .applied(track, fileName, durationMs):
            return "applied \(track.rawValue) \(fileName) in \(durationMs) ms"
        case let .wouldApply(track, fileName):
            return "would apply \(track.rawValue) \(fileName)"
        case let .repaired(fileName, table, repair):
            return "warning: \(fileName) left \(table) unlike its sync rule: \(repair). The rule decides this: remove the "
                + "statement from \(fileName) if it has not shipped (it does nothing but this warning), or state what you meant "
                + "in the rule (read_only, fixed, ferry.sync_members, ferry.drop_sync_rules)"
        }
    }
}
