import FerryCoreMigrations
import Foundation

extension MigrationFile {
    /// Ferry's own migrations, the core track: the repository's `migrations/`, built
    /// into the binary at build time (FerryCoreMigrations, `migrations/CoreMigrations.embed`),
    /// in version order.
    ///
    /// - Throws: what `MigrationDirectory.load` would for the same files on disk (a bad
    ///   name, a duplicate version, bytes that are not UTF-8); the tests keep that from
    ///   ever reaching a release.
    public static func core() throws(MigrationError) -> [MigrationFile] {
        try builtIn.get()
    }

    private static let builtIn = Result { () throws(MigrationError) -> [MigrationFile] in
        var files: [MigrationFile] = []
        for (name, bytes) in CoreMigrations.files {
            files.append(try MigrationFile(fileName: name, path: "migrations/\(name)", contents: Data(bytes)))
        }
        return try MigrationDirectory.ordered(files)
    }
}
