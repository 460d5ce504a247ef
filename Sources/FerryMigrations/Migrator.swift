import FerryPostgres

/// Applies migration files to one database, each in its own transaction, one run at a
/// time per database.
///
/// Blocking: every call waits for PostgreSQL. Meant for the `ferry migrate` command and
/// tests, never for an event-loop thread.
public struct Migrator: Sendable {
    /// The owner role's URL or conninfo (`database.migration_url`).
    public var databaseURL: String
    /// The files on disk, as `MigrationDirectory.load` returns them.
    public var files: [MigrationFile]
    /// Seconds to wait for another run's lock before giving up; nil waits indefinitely.
    public var lockTimeout: Double?

    public init(databaseURL: String, files: [MigrationFile], lockTimeout: Double? = nil) {
        self.databaseURL = databaseURL
        self.files = files
        self.lockTimeout = lockTimeout
    }

    /// Compares the files with the database, changing nothing (`ferry migrate status`).
    public func plan() throws(MigrationError) -> MigrationPlan {
        let connection = try connect()
        defer { connection.close() }
        return try currentPlan(on: connection)
    }

    /// Applies every pending file in version order, or with `dryRun` only reports them.
    ///
    /// Takes the migration lock first (a dry run does not), then re-reads what is applied,
    /// so a run that waited for another finds only what that one left. Refuses to run
    /// anything when an applied file has changed or a pending one contains its own
    /// BEGIN/COMMIT/ROLLBACK. Stops at the first failing file, whose
    /// transaction is rolled back; the files before it stay applied.
    ///
    /// - Parameter progress: called for each event as it happens, on the calling thread.
    /// - Throws: `MigrationError`; `.migrationFailed` names the file and line.
    public func migrate(
        dryRun: Bool = false, progress: (MigrationEvent) -> Void = { _ in }
    ) throws(MigrationError) -> MigrationSummary {
        let clock = ContinuousClock()
        let start = clock.now
        let lock = dryRun ? nil : try MigrationLock.acquire(url: databaseURL, timeout: lockTimeout) {
            progress(.waitingForLock)
        }
        defer { lock?.release() }
        let connection = try connect()
        defer { connection.close() }

        let plan = try currentPlan(on: connection)
        guard plan.changed.isEmpty else { throw .checksumMismatch(plan.changed) }
        for file in plan.pending {
            if let found = TransactionControlScanner.firstFinding(in: file.script) {
                throw .transactionStatement(fileName: file.fileName, line: found.line, statement: found.statement)
            }
        }
        for record in plan.missing { progress(.missingFile(record)) }

        var summary = MigrationSummary(
            applied: [], wouldApply: [], alreadyApplied: plan.upToDate, missing: plan.missing,
            dryRun: dryRun, durationMs: 0)
        for file in plan.pending {
            if dryRun {
                summary.wouldApply.append(file.fileName)
                progress(.wouldApply(fileName: file.fileName))
                continue
            }
            let fileStart = clock.now
            try apply(file, on: connection)
            let milliseconds = Self.milliseconds(clock.now - fileStart)
            summary.applied.append(.init(fileName: file.fileName, durationMs: milliseconds))
            progress(.applied(fileName: file.fileName, durationMs: milliseconds))
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

    private func currentPlan(on connection: PostgresConnection) throws(MigrationError) -> MigrationPlan {
        do {
            return MigrationPlan(files: files, applied: try MigrationHistory.read(connection))
        } catch {
            throw .database(operation: "reading ferry.schema_migrations", error: error)
        }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
