import FerryPostgres

/// Applies Ferry's own migrations, then an app's, to one database: each file in its own
/// transaction, one run at a time per database.
///
/// Blocking: every call waits for PostgreSQL. Meant for the `ferry migrate` command and
/// tests, never for an event-loop thread.
public struct Migrator: Sendable {
    /// The owner role's URL or conninfo (`database.migration_url`).
    public var databaseURL: String
    /// The core track: Ferry's own files (`MigrationFile.core()` outside tests).
    public var core: [MigrationFile]
    /// The app track's files; nil applies and checks the core track only.
    public var app: AppMigrations?
    /// Seconds to wait for another run's lock before giving up; nil waits indefinitely.
    public var lockTimeout: Double?

    public init(databaseURL: String, core: [MigrationFile], app: AppMigrations?, lockTimeout: Double? = nil) {
        self.databaseURL = databaseURL
        self.core = core
        self.app = app
        self.lockTimeout = lockTimeout
    }

    /// Compares the files with the database, changing nothing (`ferry migrate status`).
    public func status() throws(MigrationError) -> MigrationStatus {
        let connection = try connect()
        defer { connection.close() }
        return try currentStatus(on: connection)
    }

    /// Applies every pending file, core first, each track in version order; with
    /// `dryRun` only reports them.
    ///
    /// Takes the migration lock first (a dry run does not), then re-reads what is applied,
    /// so a run that waited for another finds only what that one left. A history from
    /// before the tracks were split is divided first, in a transaction of its own. Refuses
    /// to run anything when an applied file has changed or a pending one contains its own
    /// BEGIN/COMMIT/ROLLBACK. Stops at the first failing file, whose transaction is rolled
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
        let changed = status.plans.flatMap(\.changed)
        guard changed.isEmpty else { throw .checksumMismatch(changed) }
        let pending = status.plans.flatMap { plan in plan.pending.map { (track: plan.track, file: $0) } }
        for (_, file) in pending {
            if let found = TransactionControlScanner.firstFinding(in: file.script) {
                throw .transactionStatement(fileName: file.fileName, line: found.line, statement: found.statement)
            }
        }
        if let split = status.legacySplit, !dryRun {
            try MigrationHistory.convert(split, on: connection)
            progress(.dividedLegacyHistory(moved: split.movedToApp.count, divided: split.divided.count))
        }
        let missing = status.plans.flatMap(\.missing)
        for record in missing { progress(.missingFile(record)) }

        var summary = MigrationSummary(
            applied: [], wouldApply: [], alreadyApplied: status.plans.map(\.upToDate).reduce(0, +), missing: missing,
            dryRun: dryRun, appChecked: app != nil, durationMs: 0)
        for (track, file) in pending {
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
        return MigrationStatus(core: core, app: app, applied: recorded.applied, legacySplit: recorded.legacySplit)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
