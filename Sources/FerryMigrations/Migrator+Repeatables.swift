import FerryPostgres

extension Migrator {
    /// Applies the core track's due repeatable files (or, in a dry run, reports them),
    /// adding them to `summary`.
    func applyRepeatables(
        _ files: [RepeatableFile], dryRun: Bool, on connection: PostgresConnection, into summary: inout MigrationSummary,
        progress: (MigrationEvent) -> Void
    ) throws(MigrationError) {
        if dryRun {
            for file in files {
                summary.wouldApply.append(.init(track: .core, fileName: file.name))
                progress(.wouldApply(track: .core, fileName: file.name))
            }
            return
        }
        for (file, milliseconds) in try applyRepeatables(files, on: connection) {
            summary.applied.append(.init(track: .core, fileName: file.name, durationMs: milliseconds))
            progress(.applied(track: .core, fileName: file.name, durationMs: milliseconds))
        }
    }

    /// Runs `files` in name order and records them, all in one transaction, so that a
    /// database never holds half of a change that spans two families; returns how long
    /// each took. With no files, only refreshes what is generated for the app's tables
    /// (after core files under the rule, `RepeatableFile.lastCoreVersionBefore`).
    ///
    /// Function bodies are not checked as they are created (`check_function_bodies`
    /// off, as pg_dump's output runs), so a family's SQL function may call one a later
    /// family file defines. What Ferry generates from the app's tables is refreshed
    /// after them, in the same transaction, as after a versioned file: a table's
    /// generated trigger function follows a change to its generator here.
    func applyRepeatables(
        _ files: [RepeatableFile], on connection: PostgresConnection
    ) throws(MigrationError) -> [(RepeatableFile, Int)] {
        var current = files.first ?? RepeatableFile(name: "functions", path: "migrations/functions", checksum: "", script: "")
        do {
            return try connection.transaction { connection in
                try Self.runRepeatables(files, on: connection) { current = $0 }
            }
        } catch let step as Step {
            switch step {
            case let .script(error):
                throw .migrationFailed(MigrationFailure(fileName: current.name, script: current.script, error: error))
            case let .generated(error):
                throw .migrationFailed(MigrationFailure(fileName: current.name, location: nil, error: error))
            case let .bookkeeping(error):
                throw .database(operation: "recording \(current.name) in ferry.schema_repeatables", error: error)
            case .leftTransaction:
                throw .transactionControl(fileName: current.name)
            case .ferrySchema:
                throw .database(
                    operation: "applying \(current.name)",
                    error: PostgresError(kind: .protocolError, message: "unexpected schema check"))
            }
        } catch let error as PostgresError {
            throw .migrationFailed(MigrationFailure(fileName: current.name, location: nil, error: error))
        } catch {
            throw .database(
                operation: "applying \(current.name)", error: PostgresError(kind: .protocolError, message: "\(error)"))
        }
    }

    /// The body of the repeatable files' transaction; `starting` is told each file
    /// before it runs, so that a failure names it.
    private static func runRepeatables(
        _ files: [RepeatableFile], on connection: PostgresConnection, starting: (RepeatableFile) -> Void
    ) throws(Step) -> [(RepeatableFile, Int)] {
        let clock = ContinuousClock()
        let transactionID = try transactionID(on: connection, assigning: true)
        do {
            try connection.execute("SET LOCAL check_function_bodies = off")
        } catch {
            throw .bookkeeping(error)
        }
        var timed: [(RepeatableFile, Int)] = []
        for file in files {
            starting(file)
            let start = clock.now
            do {
                try connection.execute(file.script)
            } catch {
                throw .script(error)
            }
            timed.append((file, milliseconds(clock.now - start)))
            guard try Self.transactionID(on: connection, assigning: false) == transactionID else {
                throw .leftTransaction
            }
        }
        do {
            try connection.execute("SET LOCAL check_function_bodies TO DEFAULT")
        } catch {
            throw .bookkeeping(error)
        }
        try refreshGenerated(on: connection)
        do {
            for (file, milliseconds) in timed {
                try RepeatableHistory.record(file, durationMs: milliseconds, on: connection)
            }
        } catch {
            throw .bookkeeping(error)
        }
        return timed
    }
}
