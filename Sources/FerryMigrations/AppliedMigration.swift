/// One row of `ferry.schema_migrations`: a migration that has been applied.
public struct AppliedMigration: Sendable, Equatable {
    /// The sequence it belongs to.
    public var track: MigrationTrack
    /// The file's version number (the table's primary key, with the track).
    public var version: Int
    /// The file name it was applied from, e.g. `0002_example_app.sql`.
    public var fileName: String
    /// Hex SHA-256 of the file's bytes when it was applied.
    public var checksum: String
    /// When it was applied, as `YYYY-MM-DD HH:MM:SS UTC`.
    public var appliedAt: String
    /// How long its script took to run, in milliseconds.
    public var durationMs: Int

    public init(
        track: MigrationTrack, version: Int, fileName: String, checksum: String, appliedAt: String, durationMs: Int
    ) {
        self.track = track
        self.version = version
        self.fileName = fileName
        self.checksum = checksum
        self.appliedAt = appliedAt
        self.durationMs = durationMs
    }
}
