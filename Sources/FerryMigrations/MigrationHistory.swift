import FerryPostgres

/// The bookkeeping table `ferry.schema_migrations`: one row per applied file.
enum MigrationHistory {
    /// Created on first use, inside the transaction of the first migration applied, and
    /// not before: the first migration may itself create the `ferry` schema with a plain
    /// `CREATE SCHEMA ferry`, which would fail if the migrator had made it already.
    static let createTable = """
        CREATE TABLE IF NOT EXISTS ferry.schema_migrations (
            version     int         PRIMARY KEY,
            name        text        NOT NULL,
            checksum    text        NOT NULL,
            applied_at  timestamptz NOT NULL DEFAULT now(),
            duration_ms int         NOT NULL
        );
        COMMENT ON TABLE ferry.schema_migrations IS
            'Applied migration files, written by ferry migrate. checksum is the sha256 of the file bytes.';
        """

    /// The recorded migrations, ascending; empty when the table does not exist yet.
    static func read(_ connection: PostgresConnection) throws(PostgresError) -> [AppliedMigration] {
        let present = try connection.query("SELECT to_regclass('ferry.schema_migrations') IS NOT NULL AS present")
        guard try present.first?.bool("present") == true else { return [] }
        let result = try connection.query("""
            SELECT version, name, checksum, duration_ms,
                   to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' AS applied_at
            FROM ferry.schema_migrations ORDER BY version
            """)
        var applied: [AppliedMigration] = []
        for row in result.rows {
            applied.append(AppliedMigration(
                version: try row.int("version") ?? 0, fileName: try row.string("name") ?? "",
                checksum: try row.string("checksum") ?? "", appliedAt: try row.string("applied_at") ?? "",
                durationMs: try row.int("duration_ms") ?? 0))
        }
        return applied
    }

    /// Creates the schema and table when missing. Checks first rather than relying on
    /// `IF NOT EXISTS` alone, because `CREATE SCHEMA IF NOT EXISTS` still demands CREATE on
    /// the database even when the schema is there.
    static func ensureTable(_ connection: PostgresConnection) throws(PostgresError) {
        let existing = try connection.query("""
            SELECT to_regnamespace('ferry') IS NOT NULL AS has_schema,
                   to_regclass('ferry.schema_migrations') IS NOT NULL AS has_table
            """)
        guard try existing.first?.bool("has_table") != true else { return }
        if try existing.first?.bool("has_schema") != true {
            try connection.execute("CREATE SCHEMA IF NOT EXISTS ferry")
        }
        try connection.execute(createTable)
    }

    /// Records `file` as applied (inside the file's own transaction).
    static func record(_ file: MigrationFile, durationMs: Int, on connection: PostgresConnection) throws(PostgresError) {
        try ensureTable(connection)
        _ = try connection.query(
            "INSERT INTO ferry.schema_migrations (version, name, checksum, duration_ms) VALUES ($1, $2, $3, $4)",
            [String(file.version), file.fileName, file.checksum, String(durationMs)])
    }
}
