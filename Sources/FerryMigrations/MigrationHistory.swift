import FerryPostgres

/// The bookkeeping table `ferry.schema_migrations`: one row per applied file and track.
enum MigrationHistory {
    /// Created on first use, inside the transaction of the first migration applied, and
    /// not before: the first core migration creates the `ferry` schema with a plain
    /// `CREATE SCHEMA ferry`, which would fail if the migrator had made it already.
    static let createTable = """
        CREATE TABLE IF NOT EXISTS ferry.schema_migrations (
            track       text        NOT NULL CONSTRAINT schema_migrations_track CHECK (track IN ('core', 'app')),
            version     int         NOT NULL,
            name        text        NOT NULL,
            checksum    text        NOT NULL,
            applied_at  timestamptz NOT NULL DEFAULT now(),
            duration_ms int         NOT NULL,
            PRIMARY KEY (track, version)
        );
        COMMENT ON TABLE ferry.schema_migrations IS
            'Applied migration files, written by ferry migrate: Ferry''s own (track core) and the app''s (track app). checksum is the sha256 of the file bytes.';
        """

    /// What the table holds, in either layout.
    struct Recorded {
        /// Every row, core first, each track ascending by version.
        var applied: [AppliedMigration]
        /// Whether the table still has the layout from before the tracks were split (no
        /// `track` column); `applied` then shows the rows as the split will record them.
        var legacySplit: LegacyHistory.Split?
    }

    /// The recorded migrations; empty when the table does not exist yet. A table from
    /// before the split is read as the split will leave it, without changing it.
    static func read(_ connection: PostgresConnection, core: [MigrationFile]) throws(MigrationError) -> Recorded {
        let layout: PostgresResult
        do {
            layout = try connection.query(
                """
                SELECT to_regclass('ferry.schema_migrations') IS NOT NULL AS present,
                       EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
                                WHERE attrelid = to_regclass('ferry.schema_migrations')
                                  AND attname = 'track' AND NOT attisdropped) AS tracked
                """)
            guard try layout.first?.bool("present") == true else { return Recorded(applied: [], legacySplit: nil) }
            if try layout.first?.bool("tracked") == true {
                return Recorded(applied: try rows(connection, track: "track"), legacySplit: nil)
            }
        } catch {
            throw .database(operation: "reading ferry.schema_migrations", error: error)
        }
        let legacy: [AppliedMigration]
        do {
            legacy = try rows(connection, track: "'core'")
        } catch {
            throw .database(operation: "reading ferry.schema_migrations", error: error)
        }
        let split = try LegacyHistory.split(legacy, core: core)
        return Recorded(applied: split.rows, legacySplit: split)
    }

    private static func rows(_ connection: PostgresConnection, track: String) throws(PostgresError) -> [AppliedMigration] {
        let result = try connection.query(
            """
            SELECT \(track) AS track, version, name, checksum, duration_ms,
                   to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' AS applied_at
            FROM ferry.schema_migrations ORDER BY 1 DESC, version
            """)
        var applied: [AppliedMigration] = []
        for row in result.rows {
            applied.append(
                AppliedMigration(
                    track: MigrationTrack(rawValue: try row.string("track") ?? "") ?? .app,
                    version: try row.int("version") ?? 0, fileName: try row.string("name") ?? "",
                    checksum: try row.string("checksum") ?? "", appliedAt: try row.string("applied_at") ?? "",
                    durationMs: try row.int("duration_ms") ?? 0))
        }
        return applied
    }

    /// Rewrites a table from before the split into the tracked layout, in one transaction:
    /// the rows `split` describes, each keeping when it was applied and how long it took.
    static func convert(_ split: LegacyHistory.Split, on connection: PostgresConnection) throws(MigrationError) {
        do {
            try connection.transaction { connection in
                try connection.execute(
                    """
                    ALTER TABLE ferry.schema_migrations
                        ADD COLUMN track text NOT NULL DEFAULT 'core'
                            CONSTRAINT schema_migrations_track CHECK (track IN ('core', 'app'));
                    ALTER TABLE ferry.schema_migrations ALTER COLUMN track DROP DEFAULT;
                    ALTER TABLE ferry.schema_migrations DROP CONSTRAINT schema_migrations_pkey;
                    ALTER TABLE ferry.schema_migrations ADD PRIMARY KEY (track, version);
                    COMMENT ON TABLE ferry.schema_migrations IS
                        'Applied migration files, written by ferry migrate: Ferry''s own (track core) and the app''s (track app). checksum is the sha256 of the file bytes.';
                    """)
                for version in split.movedToApp {
                    _ = try connection.query(
                        "UPDATE ferry.schema_migrations SET track = 'app' WHERE version = \(bind: version)" as PostgresStatement)
                }
                for part in split.divided {
                    _ = try connection.query(
                        """
                        INSERT INTO ferry.schema_migrations (track, version, name, checksum, applied_at, duration_ms)
                        SELECT 'app', version, \(bind: part.appName), \(bind: part.appChecksum), applied_at, duration_ms
                          FROM ferry.schema_migrations WHERE track = 'core' AND version = \(bind: part.version)
                        """ as PostgresStatement)
                    _ = try connection.query(
                        """
                        UPDATE ferry.schema_migrations SET name = \(bind: part.coreName), checksum = \(bind: part.coreChecksum)
                         WHERE track = 'core' AND version = \(bind: part.version)
                        """ as PostgresStatement)
                }
            }
        } catch let error as PostgresError {
            throw .database(operation: "dividing ferry.schema_migrations into the core and app tracks", error: error)
        } catch {
            throw .database(
                operation: "dividing ferry.schema_migrations into the core and app tracks",
                error: PostgresError(kind: .protocolError, message: "\(error)"))
        }
    }

    /// Creates the schema and table when missing. Checks first rather than relying on
    /// `IF NOT EXISTS` alone, because `CREATE SCHEMA IF NOT EXISTS` still demands CREATE on
    /// the database even when the schema is there.
    static func ensureTable(_ connection: PostgresConnection) throws(PostgresError) {
        let existing = try connection.query(
            """
            SELECT to_regnamespace('ferry') IS NOT NULL AS has_schema,
                   to_regclass('ferry.schema_migrations') IS NOT NULL AS has_table
            """)
        guard try existing.first?.bool("has_table") != true else { return }
        if try existing.first?.bool("has_schema") != true {
            try connection.execute("CREATE SCHEMA IF NOT EXISTS ferry")
        }
        try connection.execute(createTable)
    }

    /// Records `file` as applied on `track` (inside the file's own transaction).
    static func record(
        _ file: MigrationFile, track: MigrationTrack, durationMs: Int, on connection: PostgresConnection
    ) throws(PostgresError) {
        try ensureTable(connection)
        _ = try connection.query(
            """
            INSERT INTO ferry.schema_migrations (track, version, name, checksum, duration_ms)
            VALUES (\(bind: track.rawValue), \(bind: file.version), \(bind: file.fileName), \(bind: file.checksum), \(bind: durationMs))
            """ as PostgresStatement)
    }
}
