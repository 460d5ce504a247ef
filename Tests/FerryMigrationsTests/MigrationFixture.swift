import Foundation
import FerryMigrations

/// A temporary directory of migration files written by a test.
struct MigrationFixture {
    let path: String

    /// Writes `files` (name to contents) into a new temporary directory.
    init(_ files: [String: String]) throws {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("ferry_mig_\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, contents) in files { try write(name, contents) }
    }

    /// Creates or replaces one file.
    func write(_ name: String, _ contents: String) throws {
        try Data(contents.utf8).write(to: URL(fileURLWithPath: (path as NSString).appendingPathComponent(name)))
    }

    /// Writes raw bytes.
    func write(_ name: String, bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: (path as NSString).appendingPathComponent(name)))
    }

    /// Deletes one file.
    func remove(_ name: String) throws {
        try FileManager.default.removeItem(atPath: (path as NSString).appendingPathComponent(name))
    }

    /// A migrator that applies this directory as an app's migrations, with no core files:
    /// the engine alone, without Ferry's schema.
    func migrator(_ databaseURL: String, lockTimeout: Double? = nil) throws -> Migrator {
        Migrator(databaseURL: databaseURL, core: [], app: try AppMigrations.load(directory: path), lockTimeout: lockTimeout)
    }

    /// Deletes the directory.
    func destroy() { try? FileManager.default.removeItem(atPath: path) }
}
