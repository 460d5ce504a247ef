import Foundation
import FerryPostgres

/// A database of its own for one test, created through FERRY_TEST_OWNER_URL and dropped
/// by `drop()`.
struct ScratchDatabase {
    /// `ferry_mig_<random>`.
    let name: String
    /// The owner URL with the database name replaced.
    let url: String
    /// FERRY_TEST_OWNER_URL itself, used to create and drop the database.
    let ownerURL: String

    /// FERRY_TEST_OWNER_URL, or a thrown error explaining how to set it (never a skip).
    static func ownerURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["FERRY_TEST_OWNER_URL"], !url.isEmpty else {
            throw TestSetupError(
                "FERRY_TEST_OWNER_URL is not set; it must be the owner role's URL with CREATEDB, "
                    + "e.g. postgresql://ferry_owner:ferry_owner@127.0.0.1:54329/ferry (deploy/test.sh sets it)")
        }
        return url
    }

    /// Creates a fresh, empty database.
    static func create() throws -> ScratchDatabase {
        let ownerURL = try ownerURL()
        let suffix = (0..<12).map { _ in "0123456789abcdef".randomElement()! }
        let name = "ferry_mig_" + String(suffix)
        let admin = try PostgresConnection(url: ownerURL)
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \(name)")
        return ScratchDatabase(name: name, url: try Self.url(ownerURL, database: name), ownerURL: ownerURL)
    }

    /// Drops the database, ending any session still connected to it.
    func drop() {
        do {
            let admin = try PostgresConnection(url: ownerURL)
            defer { admin.close() }
            try admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        } catch {
            print("warning: could not drop scratch database \(name): \(error)")
        }
    }

    /// A connection to the scratch database.
    func connect() throws -> PostgresConnection { try PostgresConnection(url: url) }

    /// The rows of the first column of `sql`, as text.
    func column(_ sql: String) throws -> [String?] {
        let connection = try connect()
        defer { connection.close() }
        return try connection.query(sql).rows.map { $0[0] }
    }

    /// `url` with its database name replaced, query parameters kept.
    static func url(_ url: String, database: String) throws -> String {
        let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let base = String(parts[0])
        guard let scheme = base.range(of: "://"), let slash = base[scheme.upperBound...].lastIndex(of: "/") else {
            throw TestSetupError("FERRY_TEST_OWNER_URL must be a postgresql:// URL that names a database")
        }
        let query = parts.count > 1 ? "?" + parts[1] : ""
        return base[...slash] + database + query
    }
}

/// A test precondition that does not hold (a missing variable, a missing binary).
struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
