import Foundation

/// Reads the migration files of one directory: an app's (`ferry migrate --dir`).
public enum MigrationDirectory {
    /// Every `NNNN_name.sql` file in `path`, in ascending version order.
    ///
    /// Hidden entries, subdirectories and files not ending in `.sql` (a README, say) are
    /// ignored; any other `.sql` file must be well named, so a typo cannot make a migration
    /// silently disappear.
    ///
    /// - Throws: `MigrationError.directoryUnreadable`, `.badFileName`, `.duplicateVersion`
    ///   or `.unreadableFile`.
    public static func load(path: String) throws(MigrationError) -> [MigrationFile] {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .directoryUnreadable(path: path, reason: "it does not exist")
        }
        guard isDirectory.boolValue else {
            throw .directoryUnreadable(path: path, reason: "it is not a directory")
        }
        let names: [String]
        do {
            names = try manager.contentsOfDirectory(atPath: path)
        } catch {
            throw .directoryUnreadable(path: path, reason: "it cannot be listed (\(error.localizedDescription))")
        }
        var files: [MigrationFile] = []
        for name in names.sorted() where !name.hasPrefix(".") && name.lowercased().hasSuffix(".sql") {
            let filePath = (path as NSString).appendingPathComponent(name)
            var entryIsDirectory: ObjCBool = false
            guard manager.fileExists(atPath: filePath, isDirectory: &entryIsDirectory), !entryIsDirectory.boolValue else {
                continue
            }
            guard MigrationFile.version(ofFileName: name) != nil else {
                throw .badFileName(fileName: name, directory: path)
            }
            guard let contents = manager.contents(atPath: filePath) else {
                throw .unreadableFile(path: filePath, reason: "it cannot be read")
            }
            files.append(try MigrationFile(fileName: name, path: filePath, contents: contents))
        }
        return try ordered(files)
    }

    /// `files` in ascending version order.
    ///
    /// - Throws: `MigrationError.duplicateVersion` when two share a version.
    static func ordered(_ files: [MigrationFile]) throws(MigrationError) -> [MigrationFile] {
        let sorted = files.sorted { ($0.version, $0.fileName) < ($1.version, $1.fileName) }
        for (previous, next) in zip(sorted, sorted.dropFirst()) where previous.version == next.version {
            throw .duplicateVersion(version: next.version, fileNames: [previous.fileName, next.fileName])
        }
        return sorted
    }
}
