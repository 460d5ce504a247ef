import Foundation

/// The services a test run uses, from the variables `deploy/test.sh` exports.
/// A missing variable is a test failure with a clear message, never a skip.
public enum TestEnvironment {
    /// Why the environment is incomplete.
    public struct Missing: Error, CustomStringConvertible {
        public let description: String

        /// A missing-setup error with this message.
        public init(description: String) { self.description = description }
    }

    /// Environment variable `name`; throws ``Missing`` when it is unset or empty.
    public static func require(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw Missing(description: "\(name) is not set: run the tests through deploy/test.sh, which starts PostgreSQL and memcached")
        }
        return value
    }

    /// The owner role's URL (may CREATE DATABASE).
    public static func ownerURL() throws -> String { try require("FERRY_TEST_OWNER_URL") }
    /// The serve role's URL.
    public static func appURL() throws -> String { try require("FERRY_TEST_APP_URL") }
    /// The shared memcached, `host:port`.
    public static func memcached() throws -> String { try require("FERRY_TEST_MEMCACHED") }

    /// The memcached send/receive timeout the tests' servers use on the shared
    /// memcached, instead of the production default of 100 ms. That memcached answers
    /// in well under a millisecond, but a loaded 2-core machine can leave a test's
    /// process unscheduled for longer than 100 ms, and a page then met a timeout (503
    /// `paging_unavailable`) that no user's memcached would give. Tests of memcached's
    /// failures run memcached processes of their own and set what they test.
    public static let memcachedPollTimeoutMs = 1000

    /// The directory of PostgreSQL's server binaries (initdb, pg_ctl).
    public static func postgresBin() throws -> String { try require("FERRY_TEST_PG_BIN") }

    /// The repository root (where `migrations/` is), found from this file's path.
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `url` with its database name replaced.
    public static func url(_ url: String, database: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.path = "/" + database
        return components.string ?? url
    }
}
