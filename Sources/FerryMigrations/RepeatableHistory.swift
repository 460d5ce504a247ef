import FerryPostgres

/// The bookkeeping table `ferry.schema_repeatables`: one row per repeatable file, with
/// the checksum it was last applied with.
enum RepeatableHistory {
    /// Created on first use, in the transaction of the first repeatable files applied
    /// (after core 0001 has created schema `ferry`), as `ferry.schema_migrations` is.
    static let createTable = """
        CREATE TABLE IF NOT EXISTS ferry.schema_repeatables (
            name        text        PRIMARY KEY,
            checksum    text        NOT NULL,
            applied_at  timestamptz NOT NULL DEFAULT now(),
            duration_ms int         NOT NULL
        );
        COMMENT ON TABLE ferry.schema_repeatables IS
            'Repeatable files (migrations/functions) as last applied by ferry migrate: checksum is the sha256 of the file bytes; a file whose checksum differs is applied again.';
        """

    /// Every row, by name; empty when the table does not exist yet.
    static func read(_ connection: PostgresConnection) throws(MigrationError) -> [AppliedRepeatable] {
        do {
            let present = try connection.query("SELECT to_regclass('ferry.schema_repeatables') IS NOT NULL AS present")
            guard try present.first?.bool("present") == true else { return [] }
            let result = try connection.query(
                """
                SELECT name, checksum, duration_ms,
                       to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' AS applied_at
                FROM ferry.schema_repeatables ORDER BY name COLLATE "C"
                """)
            var applied: [AppliedRepeatable] = []
            for row in result.rows {
                applied.append(
                    AppliedRepeatable(
                        name: try row.string("name") ?? "", checksum: try row.string("checksum") ?? "",
                        appliedAt: try row.string("applied_at") ?? "", durationMs: try row.int("duration_ms") ?? 0))
            }
            return applied
        } catch {
            throw .database(operation: "reading ferry.schema_repeatables", error: error)
        }
    }

    /// Records `file` as applied now (inside the repeatable files' transaction).
    static func record(_ file: RepeatableFile, durationMs: Int, on connection: PostgresConnection) throws(PostgresError) {
        try connection.execute(createTable)
        _ = try connection.query(
            """
            INSERT INTO ferry.schema_repeatables (name, checksum, duration_ms)
            VALUES (\(bind: file.name), \(bind: file.checksum), \(bind: durationMs))
            ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now(), duration_ms = excluded.duration_ms
            """ as PostgresStatement)
    }
}
