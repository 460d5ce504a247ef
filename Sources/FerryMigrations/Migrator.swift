import FerryPostgres

/// Applies Ferry's own migrations, then an app's, to one database: each versioned file in
/// its own transaction, Ferry's changed repeatable files together in one, one run at a
/// time per database.
///
/// Blocking: every call waits for PostgreSQL. Meant for the `ferry migrate` command and
/// tests, never for an event-loop thread.
public struct Migrator: Sendable {
    /// The owner role's URL or conninfo (`database.migration_url`).
    public var databaseURL: String
    /// The core track: Ferry's own files (`MigrationFile.core()` outside tests).
    public var core: [MigrationFile]
    /// The core track's repeatable files (`RepeatableFile.core()` outside tests): the
    /// current definitions of Ferry's functions, triggers and policies.
    public var repeatable: [RepeatableFile]
    /// The app track's files; nil applies and checks the core track only.
    public var app: AppMigrations?
    /// Seconds to wait for another run's lock before giving up; nil waits indefinitely.
    public var lockTimeout: Double?

    public init(
        databaseURL: String, core: [MigrationFile], repeatable: [RepeatableFile] = [], app: AppMigrations?,
        lockTimeout: Double? = nil
    ) {
        self.databaseURL = databaseURL
        self.core = core
        self.repeatable = repeatable
        self.app = app
        self.lockTimeout = lockTimeout
    }

    /// Compares the files with the database, changing nothing (`ferry migrate status`).
    public func status() throws(MigrationError) -> MigrationStatus {
        let connection = try connect()
        defer { connection.close() }
        return try currentStatus(on: connection)
    }

    /// Applies every pending file: the core track's versioned files in version order, then
    /// its repeatable files that are new or changed (together, in one transaction), then the
    /// app's files in version order; with `dryRun` only reports them.
    ///
    /// Takes the migration lock first (a dry run does not), then re-reads what is applied,
    /// so a run that waited for another finds only what that one left. A history from
    /// before the tracks were split is divided first, in a transaction of its own. Refuses
    /// to run anything when an applied versioned file has changed or a pending one contains
    /// its own BEGIN/COMMIT/ROLLBACK. Skips the repeatable files, with a warning, when the
    /// database has core versions this ferry does not know. Stops at the first failing file, whose transaction is rolled
    /// back; the files before it stay applied. An app file that changes schema `ferry`
    /// fails like a file PostgreSQL refused.
    ///
    /// - Parameter progress: called for each event as it happens, on the calling thread.
    /// - Throws: `MigrationError`; `.migrationFailed` names the file and line.
    public func migrate(
        dryRun: Bool = false, progress: (MigrationEvent) -> Void = { _ in }
    ) throws(MigrationError) -> MigrationSummary {
        let clock = ContinuousClock()
        let start = clock.now
        let lock =
            dryRun
            ? nil
            : try MigrationLock.acquire(url: databaseURL, timeout: lockTimeout) {
                progress(.waitingForLock)
            }
        defer { lock?.release() }
        let connection = try connect()
        defer { connection.close() }

        let status = try currentStatus(on: connection)
        // Before the changed files: another app's version 1 reads as this one's, changed.
        if let app, let plan = status.app, !plan.foreignHistory.isEmpty {
            let newest = plan.foreignHistory.map(\.version).max() ?? 0
            throw .foreignHistory(
                directory: app.directory, applied: plan.foreignHistory,
                older: app.files.filter { $0.version < newest }.prefix(3).map(\.fileName))
        }
        let changed = status.plans.flatMap(\.changed)
        guard changed.isEmpty else { throw .checksumMismatch(changed) }
        let pending = status.plans.flatMap { plan in plan.pending.map { (track: plan.track, file: $0) } }
        for (_, file) in pending {
            if let found = TransactionControlScanner.firstFinding(in: file.script) {
                throw .transactionStatement(fileName: file.fileName, line: found.line, statement: found.statement)
            }
        }
        let newestKnown = core.map(\.version).max() ?? 0
        let newer = status.core.missing.map(\.version).filter { $0 > newestKnown }.max()
        let due = newer == nil ? status.repeatables.due : []
        // The repeatable files' transaction also refreshes what is generated for the app's
        // tables, which a core file under the rule leaves to it.
        let repeatablesRun =
            !due.isEmpty || status.core.pending.contains { $0.version > RepeatableFile.lastCoreVersionBefore }
        for file in due {
            if let found = TransactionControlScanner.firstFinding(in: file.script) {
                throw .transactionStatement(fileName: file.name, line: found.line, statement: found.statement)
            }
        }
        if let split = status.legacySplit, !dryRun {
            try MigrationHistory.convert(split, on: connection)
            progress(.dividedLegacyHistory(moved: split.movedToApp.count, divided: split.divided.count))
        }
        let missing = status.plans.flatMap(\.missing)
        for record in missing { progress(.missingFile(record)) }

        if let newer, !status.repeatables.due.isEmpty { progress(.repeatablesSkipped(newestApplied: newer)) }

        var summary = MigrationSummary(
            applied: [], wouldApply: [],
            alreadyApplied: status.plans.map(\.upToDate).reduce(0, +) + status.repeatables.current, missing: missing,
            dryRun: dryRun, appChecked: app != nil, durationMs: 0)
        // Core's versioned files, then core's repeatable files, then the app's: an app
        // file calls Ferry's functions as they are now.
        let firstApp = pending.firstIndex { $0.track == .app } ?? pending.endIndex
        for (index, (track, file)) in pending.enumerated() {
            if index == firstApp, repeatablesRun { try applyRepeatables(due, dryRun: dryRun, on: connection, into: &summary, progress: progress) }
            if dryRun {
                summary.wouldApply.append(.init(track: track, fileName: file.fileName))
                progress(.wouldApply(track: track, fileName: file.fileName))
                continue
            }
            let fileStart = clock.now
            let repairs = try apply(file, track: track, on: connection)
            let milliseconds = Self.milliseconds(clock.now - fileStart)
            summary.applied.append(.init(track: track, fileName: file.fileName, durationMs: milliseconds))
            progress(.applied(track: track, fileName: file.fileName, durationMs: milliseconds))
            for repair in repairs { progress(.repaired(fileName: file.fileName, table: repair.table, repair: repair.repair)) }
        }
        if firstApp == pending.endIndex, repeatablesRun {
            try applyRepeatables(due, dryRun: dryRun, on: connection, into: &summary, progress: progress)
        }
        summary.durationMs = Self.milliseconds(clock.now - start)
        return summary
    }

    /// Opens the migration session.
    func connect() throws(MigrationError) -> PostgresConnection {
        do {
            let connection = try PostgresConnection(url: databaseURL, applicationName: "ferry")
            // Error positions count characters of the text as the server decoded it; the
            // scripts are UTF-8, so the server must decode them as UTF-8.
            try connection.execute("SET client_encoding TO 'UTF8'; SET application_name TO 'ferry migrate'")
            return connection
        } catch {
            throw .database(operation: "connecting to the database", error: error)
        }
    }

    private func currentStatus(on connection: PostgresConnection) throws(MigrationError) -> MigrationStatus {
        let recorded = try MigrationHistory.read(connection, core: core)
        let repeatables = repeatable.isEmpty ? [] : try RepeatableHistory.read(connection)
        return MigrationStatus(
            core: core, app: app, applied: recorded.applied, legacySplit: recorded.legacySplit, repeatable: repeatable,
            appliedRepeatables: repeatables)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
