/// One row of `ferry.schema_repeatables`: the version of a repeatable file last applied.
public struct AppliedRepeatable: Sendable, Equatable {
    /// The file's path under `migrations/`, e.g. `functions/feed.sql` (the primary key).
    public var name: String
    /// Hex SHA-256 of the file's bytes when it was last applied.
    public var checksum: String
    /// When it was last applied, as `YYYY-MM-DD HH:MM:SS UTC`.
    public var appliedAt: String
    /// How long its script took to run then, in milliseconds.
    public var durationMs: Int

    public init(name: String, checksum: String, appliedAt: String, durationMs: Int) {
        self.name = name
        self.checksum = checksum
        self.appliedAt = appliedAt
        self.durationMs = durationMs
    }
}
