import Foundation
import Testing
import FerryTestSupport
@testable import FerryPostgres

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
            throw TestEnvironment.Missing(description: "FERRY_TEST_OWNER_URL must be postgresql://user:password@host:port/database")
        }
        self.host = host
        self.port = parts.port ?? 5432
        self.user = user
        self.password = parts.password ?? ""
        self.database = String(parts.path.dropFirst())
    }
}
