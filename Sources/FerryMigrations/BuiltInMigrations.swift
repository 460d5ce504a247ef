import FerryCoreMigrations
import Foundation

extension MigrationFile {
    /// Ferry's own versioned migrations, the core track: the `NNNN_name.sql` files of the
    /// repository's `migrations/`, built into the binary at build time
    /// (FerryCoreMigrations, `migrations/CoreMigrations.embed`), in version order.
    ///
    /// - Throws: what `MigrationDirectory.load` would for the same files on disk (a bad
    ///   name, a duplicate version, bytes that are not UTF-8); the tests keep that from
    ///   ever reaching a release.
    public static func core() throws(MigrationError) -> [MigrationFile] {
        try builtIn.get()
    }

    private static let builtIn = Result { () throws(MigrationError) -> [MigrationFile] in
        var files: [MigrationFile] = []
        for (name, bytes) in CoreMigrations.files where !name.contains("/") {
            files.append(try MigrationFile(fileName: name, path: "migrations/\(name)", contents: Data(bytes)))
        }
        return try MigrationDirectory.ordered(files)
    }
}

extension RepeatableFile {
    /// The folder of `migrations/` whose files are the core track's repeatable ones.
    public static let coreFolder = "functions/"

    /// The last core version from before the repeatable files. The versioned files after
    /// it keep to tables and data (migrations/README.md), and what Ferry generates for the
    /// app's tables is refreshed after the repeatable files instead of after each of them:
    /// a refresh between them would run the functions as the last migration left them.
    public static let lastCoreVersionBefore = 34

    /// Ferry's own repeatable files: `migrations/functions/*.sql`, built in beside the
    /// versioned ones, in name order.
    public static func core() throws(MigrationError) -> [RepeatableFile] {
        try builtIn.get()
    }

    private static let builtIn = Result { () throws(MigrationError) -> [RepeatableFile] in
        var files: [RepeatableFile] = []
        for (name, bytes) in CoreMigrations.files where name.hasPrefix(coreFolder) {
            files.append(try RepeatableFile(name: name, path: "migrations/\(name)", contents: Data(bytes)))
        }
        return files.sorted { $0.name < $1.name }
    }
}
