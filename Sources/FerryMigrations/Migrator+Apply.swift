import FerryPostgres

extension Migrator {
    /// Where in a file's transaction an error came from.
    enum Step: Error {
        /// The file's own SQL failed.
        case script(PostgresError)
        /// Regenerating what Ferry generates from the app's tables failed after the file.
        case generated(PostgresError)
        /// Writing the `ferry.schema_migrations` row failed.
        case bookkeeping(PostgresError)
        /// The file committed or rolled back the transaction it was given.
        case leftTransaction
        /// An app file changed these objects of schema `ferry`.
        case ferrySchema([String])
    }

    /// Runs one file and records it on `track`, in one transaction; what the sync rules
    /// put back after it (an app file's mistakes, `RuleRepair`).
    @discardableResult
    func apply(_ file: MigrationFile, track: MigrationTrack, on connection: PostgresConnection) throws(MigrationError) -> [RuleRepair] {
        do {
            return try connection.transaction { connection in
                try Self.runAndRecord(file, track: track, on: connection)
            }
        } catch let step as Step {
            switch step {
            case let .script(error):
                throw .migrationFailed(MigrationFailure(fileName: file.fileName, script: file.script, error: error))
            case let .generated(error):
                // The file left a synced table in a shape its trigger or its rule cannot be generated for.
                throw .migrationFailed(MigrationFailure(fileName: file.fileName, location: nil, error: error))
            case let .bookkeeping(error):
                throw .database(operation: "recording \(file.fileName) in ferry.schema_migrations", error: error)
            case .leftTransaction:
                throw .transactionControl(fileName: file.fileName)
            case let .ferrySchema(objects):
                throw .appTouchesFerrySchema(fileName: file.fileName, objects: objects)
            }
        } catch let error as PostgresError {
            // BEGIN or COMMIT failed. A failing COMMIT is the file's doing (a deferred
            // constraint, a serialization failure), so it is reported as the file's failure.
            throw .migrationFailed(MigrationFailure(fileName: file.fileName, location: nil, error: error))
        } catch {
            throw .database(
                operation: "applying \(file.fileName)",
                error: PostgresError(kind: .protocolError, message: "\(error)"))
        }
    }

    /// The body of a file's transaction: the script (for an app file, between two looks
    /// at schema `ferry`), a check that the script left the transaction open, what Ferry
    /// generates from the app's tables brought up to date (core migrations 0011 and 0019;
    /// for a core file after `RepeatableFile.lastCoreVersionBefore`, after the repeatable
    /// files instead), and the bookkeeping row.
    private static func runAndRecord(
        _ file: MigrationFile, track: MigrationTrack, on connection: PostgresConnection
    ) throws(Step) -> [RuleRepair] {
        let clock = ContinuousClock()
        let transactionID = try transactionID(on: connection, assigning: true)
        let before = track == .app ? try ferrySchema(on: connection) : [:]
        let start = clock.now
        do {
            try connection.execute(file.script)
        } catch {
            throw .script(error)
        }
        let durationMs = milliseconds(clock.now - start)
        // A COMMIT or ROLLBACK inside the file ends this transaction early; the statements
        // after it would then run outside it. That shows as a different transaction id.
        guard try Self.transactionID(on: connection, assigning: false) == transactionID else {
            throw .leftTransaction
        }
        if track == .app {
            let changes = FerrySchemaGuard.changes(from: before, to: try ferrySchema(on: connection))
            guard changes.isEmpty else { throw .ferrySchema(changes) }
        }
        var repairs: [RuleRepair] = []
        if track == .app {
            do {
                repairs = try RuleRepair.pending(on: connection)
            } catch {
                throw .generated(error)
            }
        }
        if track == .app || file.version <= RepeatableFile.lastCoreVersionBefore {
            try refreshGenerated(on: connection)
        }
        do {
            try MigrationHistory.record(file, track: track, durationMs: durationMs, on: connection)
        } catch {
            throw .bookkeeping(error)
        }
        return repairs
    }

    private static func ferrySchema(on connection: PostgresConnection) throws(Step) -> [String: String] {
        do {
            return try FerrySchemaGuard.snapshot(connection)
        } catch {
            throw .bookkeeping(error)
        }
    }

    /// Brings what Ferry generates from an app's tables up to date in the file's
    /// transaction, with the functions the database has so far: first what the
    /// declarative sync rules generate (`ferry.refresh_sync_rules`, core 0019: a column
    /// added to a ruled table is granted, a new foreign key indexed, the access scopes
    /// current), then the synced tables' triggers (`ferry.refresh_sync_triggers`, 0011
    /// and 0017: a generated trigger names the columns it knew, and the live feed's
    /// notify trigger the access scopes it knew), so that they are generated from the
    /// scopes the rules left. Nothing that is current is touched, so no lock is taken.
    static func refreshGenerated(on connection: PostgresConnection) throws(Step) {
        do {
            let exists = try connection.query(
                """
                SELECT pg_catalog.to_regprocedure('ferry.refresh_sync_triggers()') IS NOT NULL AS triggers,
                       pg_catalog.to_regprocedure('ferry.refresh_sync_rules()') IS NOT NULL AS rules
                """)
            if try exists.first?.bool("rules") == true {
                _ = try connection.query("SELECT ferry.refresh_sync_rules()")
            }
            if try exists.first?.bool("triggers") == true {
                _ = try connection.query("SELECT ferry.refresh_sync_triggers()")
            }
        } catch {
            throw .generated(error)
        }
    }

    /// The current transaction id, assigning one first when `assigning`; nil when none is
    /// assigned (as in a fresh implicit transaction).
    static func transactionID(on connection: PostgresConnection, assigning: Bool) throws(Step) -> String? {
        let function = assigning ? "txid_current()" : "txid_current_if_assigned()"
        do {
            return try connection.query("SELECT \(function)::text AS id").first?["id"]
        } catch {
            throw .bookkeeping(error)
        }
    }
}
