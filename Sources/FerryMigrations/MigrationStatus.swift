/// Both tracks at once, as `ferry migrate status` shows them and `ferry migrate` applies
/// them: Ferry's own first, then the app's.
public struct MigrationStatus: Sendable {
    /// Ferry's own migrations against the core rows.
    public var core: MigrationPlan
    /// Ferry's own repeatable files against `ferry.schema_repeatables`: they apply after
    /// the core track's versioned files, before the app's.
    public var repeatables: RepeatablePlan
    /// The app's migrations against the app rows; nil when no app directory was given.
    public var app: MigrationPlan?
    /// Where the app's files come from (nil without one).
    public var appDirectory: String?
    /// App rows recorded, for when the app's files were not given.
    public var appRecorded: Int
    /// Set when `ferry.schema_migrations` is from before the tracks were split: the rows
    /// above are as the next run will record them.
    public var legacySplit: LegacyHistory.Split?

    /// Compares both tracks' files with what is recorded.
    public init(
        core: [MigrationFile], app: AppMigrations?, applied: [AppliedMigration], legacySplit: LegacyHistory.Split? = nil,
        repeatable: [RepeatableFile] = [], appliedRepeatables: [AppliedRepeatable] = []
    ) {
        self.core = MigrationPlan(track: .core, files: core, applied: applied)
        repeatables = RepeatablePlan(files: repeatable, applied: appliedRepeatables)
        self.app = app.map { MigrationPlan(track: .app, files: $0.files, applied: applied) }
        appDirectory = app?.directory
        appRecorded = applied.filter { $0.track == .app }.count
        self.legacySplit = legacySplit
    }

    /// Each track's plan, in the order they apply.
    public var plans: [MigrationPlan] { [core] + (app.map { [$0] } ?? []) }

    /// The `ferry migrate status` report.
    ///
    /// ```
    /// core (built into ferry)
    ///   0001_ferry_core.sql   applied 2026-01-02 10:00:00 UTC (120 ms)
    /// core repeatable (built into ferry, applied when changed)
    ///   functions/auth.sql  applied 2026-01-02 10:00:00 UTC (12 ms)
    /// app (examples/study/migrations)
    ///   0002_example_app.sql  pending
    /// core: 1 applied, 0 pending, 0 changed, 0 missing
    /// core repeatable: 1 current, 0 due, 0 missing
    /// app: 0 applied, 1 pending, 0 changed, 0 missing
    /// ```
    public func statusReport() -> String {
        var lines: [String] = []
        if let legacySplit {
            lines.append(
                "ferry.schema_migrations is from before Ferry's migrations and the app's were split; the next "
                    + "`ferry migrate` records \(legacySplit.movedToApp.count + legacySplit.divided.count) of its rows as the "
                    + "app's and applies none of them again (shown here as they will be)")
        }
        lines.append("core (built into ferry)")
        lines += core.entryLines()
        if !repeatables.entries.isEmpty {
            lines.append("core repeatable (built into ferry, applied when changed)")
            lines += repeatables.entryLines()
        }
        if let app {
            lines.append("app (\(appDirectory ?? "?"))")
            lines += app.entryLines()
            if app.entries.isEmpty { lines.append("  no migrations in the directory or the database") }
        } else {
            lines.append(
                "app: no directory given (--dir, or database.migrations_dir); "
                    + "\(appRecorded) applied file\(appRecorded == 1 ? "" : "s") recorded, not checked")
        }
        lines.append(core.countsLine)
        if !repeatables.entries.isEmpty { lines.append(repeatables.countsLine) }
        lines += app.map { [$0.countsLine] } ?? []
        return lines.joined(separator: "\n")
    }
}

/// An app's migrations: the files of its directory.
public struct AppMigrations: Sendable, Equatable {
    /// The directory as given (`--dir`, or `database.migrations_dir`).
    public var directory: String
    /// Its `NNNN_name.sql` files, in version order.
    public var files: [MigrationFile]

    public init(directory: String, files: [MigrationFile]) {
        self.directory = directory
        self.files = files
    }

    /// Reads `directory` (see `MigrationDirectory.load`).
    public static func load(directory: String) throws(MigrationError) -> AppMigrations {
        AppMigrations(directory: directory, files: try MigrationDirectory.load(path: directory))
    }
}
