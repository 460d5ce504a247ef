import FerryPostgres
import Foundation

/// A fresh database for one test, with Ferry's migrations applied, dropped on `drop()`.
public final class ScratchDatabase: Sendable {
    /// The database name.
    public let name: String
    /// The owner role's URL for it.
    public let ownerURL: String
    /// The serve role's URL for it.
    public let appURL: String
    /// The owner role's URL (the name the migration tests use).
    public var url: String { ownerURL }

    /// Creates `ferry_t_<random>` and applies `migrations/` as the owner.
    public init(prefix: String = "ferry_t", migrate: Bool = true) throws {
        let owner = try TestEnvironment.ownerURL()
        let app = try TestEnvironment.appURL()
        name = prefix + "_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        ownerURL = TestEnvironment.url(owner, database: name)
        appURL = TestEnvironment.url(app, database: name)
        let admin = try PostgresConnection(url: owner)
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \"\(name)\"")
        if migrate { try applyMigrations() }
    }

    /// An empty scratch database (no migrations), for tests of the migrator itself.
    public static func create(prefix: String = "ferry_mig") throws -> ScratchDatabase {
        try ScratchDatabase(prefix: prefix, migrate: false)
    }

    /// A new owner-role connection; close it when done.
    public func connect() throws -> PostgresConnection { try PostgresConnection(url: ownerURL) }

    /// The first column of every row of a query, as the owner.
    public func column(_ sql: String) throws -> [String?] {
        let connection = try connect()
        defer { connection.close() }
        return try connection.query(sql).rows.map { $0[0] }
    }

    /// Applies every `migrations/*.sql` file in order, each in a transaction.
    public func applyMigrations() throws {
        let directory = TestEnvironment.repositoryRoot.appendingPathComponent("migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        let connection = try PostgresConnection(url: ownerURL)
        defer { connection.close() }
        for file in files {
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            try connection.execute("BEGIN;\n" + sql + "\nCOMMIT;")
        }
    }

    /// Drops the database, disconnecting anyone still on it.
    public func drop() {
        guard let admin = try? PostgresConnection(url: (try? TestEnvironment.ownerURL()) ?? "") else { return }
        defer { admin.close() }
        _ = try? admin.execute("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
    }
}
