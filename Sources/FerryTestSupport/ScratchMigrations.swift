import FerryMigrations
import Foundation

/// The migrations a scratch database gets: Ferry's built-in files and one app's. Their
/// fingerprint names the template that scratch databases are copied from
/// (``ScratchTemplate``).
public struct ScratchMigrations: Sendable {
    public var core: [MigrationFile]
    public var repeatable: [RepeatableFile]
    public var app: AppMigrations

    public init(core: [MigrationFile], repeatable: [RepeatableFile], app: AppMigrations) {
        self.core = core
        self.repeatable = repeatable
        self.app = app
    }

    /// Ferry's built-in files and an example app's, as `ferry migrate --dir` reads them.
    public static func example(_ app: ExampleApp) throws -> ScratchMigrations {
        try builtIn(app: try app.migrations())
    }

    /// Ferry's built-in files and an app written inline (file name to SQL), as `ferry migrate`
    /// would read them from a directory.
    public static func inline(_ appFiles: [String: String]) throws -> ScratchMigrations {
        let files = try appFiles.map { name, sql in
            try MigrationFile(fileName: name, path: "test/\(name)", contents: Data(sql.utf8))
        }.sorted { $0.version < $1.version }
        return try builtIn(app: AppMigrations(directory: "test", files: files))
    }

    private static func builtIn(app: AppMigrations) throws -> ScratchMigrations {
        ScratchMigrations(core: try MigrationFile.core(), repeatable: try RepeatableFile.core(), app: app)
    }

    /// Applies them to the database at `url` with the migrator `ferry migrate` uses.
    public func apply(to url: String) throws {
        _ = try Migrator(databaseURL: url, core: core, repeatable: repeatable, app: app).migrate()
    }

    /// SHA-256 (hex) of what decides the schema they leave: each file's name and checksum,
    /// track by track, the owner role's URL they run as, and `build`, the test binary's
    /// identity. The binary holds the built-in files and the migrator, whose Swift code
    /// (history, repairs, the order of the tracks) shapes the result as the files do.
    func fingerprint(ownerURL: String, build: String) -> String {
        var lines = ["ferry scratch template 1", "build \(build)", "owner \(ownerURL)"]
        lines += core.map { "core \($0.fileName) \($0.checksum)" }
        lines += repeatable.map { "repeatable \($0.name) \($0.checksum)" }
        lines += app.files.map { "app \($0.fileName) \($0.checksum)" }
        return MigrationFile.checksum(of: Data(lines.joined(separator: "\n").utf8))
    }
}
