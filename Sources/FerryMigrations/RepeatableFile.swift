import Foundation

/// One repeatable script: the current definition of a family of Ferry's functions,
/// triggers and policies (`migrations/functions/NAME.sql`), as Flyway's repeatable
/// migrations are.
///
/// It has no version. `ferry migrate` applies it after the core track's versioned
/// files whenever its checksum differs from the one recorded in
/// `ferry.schema_repeatables` (or none is), so changing a function means editing its
/// family file, never adding a versioned one. Every statement in it must be safe to run
/// again on a database that already has what it defines.
public struct RepeatableFile: Sendable, Equatable {
    /// Its path under `migrations/`, e.g. `functions/feed.sql`; recorded in
    /// `ferry.schema_repeatables`. Repeatable files apply in ascending order of it.
    public var name: String
    /// Where the file was read from.
    public var path: String
    /// Lower-case hex SHA-256 of the file's bytes.
    public var checksum: String
    /// The SQL sent to PostgreSQL: the file's text without a leading byte-order mark.
    public var script: String

    /// A file from its parts, as read before.
    init(name: String, path: String, checksum: String, script: String) {
        self.name = name
        self.path = path
        self.checksum = checksum
        self.script = script
    }

    /// Creates a file from its name and bytes.
    ///
    /// - Throws: `MigrationError.unreadableFile` when the bytes are not UTF-8 or contain
    ///   a NUL byte.
    public init(name: String, path: String, contents: Data) throws(MigrationError) {
        self.name = name
        self.path = path
        checksum = MigrationFile.checksum(of: contents)
        script = try MigrationFile.script(of: contents, path: path)
    }
}
