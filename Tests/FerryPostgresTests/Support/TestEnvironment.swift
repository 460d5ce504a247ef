import Foundation
import Testing
@testable import FerryPostgres

/// A required environment variable was missing; the test fails with this message.
struct MissingEnvironment: Error, CustomStringConvertible {
    let variable: String
    var description: String { "\(variable) is not set; run the tests through deploy/test.sh (see helper docs)" }
}

/// Addresses of the services the integration tests use, read from the environment.
enum TestEnvironment {
    /// A required variable's value, or a thrown `MissingEnvironment` (never a silent skip).
    static func require(_ variable: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw MissingEnvironment(variable: variable)
        }
        return value
    }

    /// URL of the owner role on the shared dev database.
    static func ownerURL() throws -> String { try require("FERRY_TEST_OWNER_URL") }

    /// Directory holding initdb, pg_ctl and friends.
    static func postgresBin() throws -> String { try require("FERRY_TEST_PG_BIN") }
}

/// A fresh connection to the shared dev database as the owner role.
func ownerConnection(preparedStatements: Bool = false) throws -> PostgresConnection {
    try PostgresConnection(url: TestEnvironment.ownerURL(), preparedStatements: preparedStatements)
}

/// The error `body` throws as a `PostgresError`, or a test failure when it throws
/// nothing or something else.
func postgresError<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> PostgresError? {
    do {
        _ = try body()
        Issue.record("expected a PostgresError, got success", sourceLocation: sourceLocation)
    } catch let error as PostgresError {
        return error
    } catch {
        Issue.record("expected a PostgresError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The pieces of `FERRY_TEST_OWNER_URL`, for tests that must rebuild it in another form
/// (conninfo string, multi-host URL, wrong password).
struct OwnerAddress {
    let host: String
    let port: Int
    let user: String
    let password: String
    let database: String

    init() throws {
        let url = try TestEnvironment.ownerURL()
        guard let parts = URLComponents(string: url), let host = parts.host, let user = parts.user else {
            throw MissingEnvironment(variable: "FERRY_TEST_OWNER_URL (as postgresql://user:password@host:port/database)")
        }
        self.host = host
        self.port = parts.port ?? 5432
        self.user = user
        self.password = parts.password ?? ""
        self.database = String(parts.path.dropFirst())
    }
}
