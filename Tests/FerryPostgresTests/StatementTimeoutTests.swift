import FerryTestSupport
import Testing
@testable import FerryPostgres

@Suite struct StatementTimeoutTests {
    @Test func queryBeyondTimeoutIsCancelled() throws {
        let connection = try ownerConnection()
        try connection.execute("SET statement_timeout = 100")
        let error = try #require(postgresError { try connection.query("SELECT pg_sleep(2)") })
        #expect(error.sqlState == "57014")
        #expect(error.kind == .timeout)
        #expect(!connection.isBroken)
        #expect(try connection.query("SELECT 1").first?[0] == "1")
    }

    @Test func pipelineBeyondTimeoutIsCancelled() throws {
        let connection = try ownerConnection()
        try connection.execute("SET statement_timeout = 100")
        let error = postgresError {
            try connection.pipeline([PostgresStatement("SELECT 1"), PostgresStatement("SELECT pg_sleep(2)"), PostgresStatement("SELECT 3")])
        }
        #expect(error?.sqlState == "57014")
        #expect(error?.statementIndex == 1)
        #expect(!connection.inTransaction)
        #expect(try connection.pipeline([PostgresStatement("SELECT 3")]).first?.first?[0] == "3")
    }

    @Test func poolAppliesStatementTimeout() throws {
        let pool = PostgresPool(url: try TestEnvironment.ownerURL(), size: 1, acquireTimeout: .seconds(5), statementTimeoutMs: 150)
        defer { pool.close() }
        let (setting, error) = try pool.withConnection { connection in
            let setting = try connection.query("SHOW statement_timeout").first?[0]
            return (setting, postgresError { try connection.query("SELECT pg_sleep(2)") })
        }
        #expect(setting == "150ms")
        #expect(error?.sqlState == "57014")
        #expect(try pool.withConnection { try $0.query("SELECT 1").first?[0] } == "1")
        #expect(pool.stats.discarded == 0)
    }
}
