import Testing
@testable import FerryPostgres

@Suite struct TransactionTests {
    struct Abort: Error {}

    private func table(_ connection: PostgresConnection) throws {
        try connection.execute("CREATE TEMP TABLE ledger (id int PRIMARY KEY)")
    }

    private func count(_ connection: PostgresConnection) throws -> Int? {
        try connection.query("SELECT count(*) FROM ledger").first?.int(0)
    }

    @Test func commitsOnSuccess() throws {
        let connection = try ownerConnection()
        try table(connection)
        let value = try connection.transaction { tx in
            _ = try tx.query("INSERT INTO ledger VALUES (1)")
            return try tx.query("SELECT count(*) FROM ledger").first?.int(0)
        }
        #expect(value == 1)
        #expect(try count(connection) == 1)
        #expect(!connection.inTransaction)
    }

    @Test func rollsBackOnThrownError() throws {
        let connection = try ownerConnection()
        try table(connection)
        #expect(throws: Abort.self) {
            try connection.transaction { tx in
                _ = try tx.query("INSERT INTO ledger VALUES (1)")
                throw Abort()
            }
        }
        #expect(try count(connection) == 0)
        #expect(!connection.inTransaction)
    }

    @Test func rollsBackOnServerError() throws {
        let connection = try ownerConnection()
        try table(connection)
        let error = postgresError {
            try connection.transaction { tx in
                _ = try tx.query("INSERT INTO ledger VALUES (1)")
                _ = try tx.query("INSERT INTO ledger VALUES (1)")
            }
        }
        #expect(error?.sqlState == "23505")
        #expect(try count(connection) == 0)
        #expect(!connection.inTransaction)
    }

    @Test func swallowedErrorDoesNotReportSuccess() throws {
        let connection = try ownerConnection()
        try table(connection)
        let error = postgresError {
            try connection.transaction { tx in
                _ = try tx.query("INSERT INTO ledger VALUES (1)")
                _ = try? tx.query("SELECT 1/0")
            }
        }
        #expect(error?.sqlState == "25P02")
        #expect(try count(connection) == 0)
    }

    @Test func nestedTransactionIsRefused() throws {
        let connection = try ownerConnection()
        try table(connection)
        let error = postgresError {
            try connection.transaction { tx in
                _ = try tx.query("INSERT INTO ledger VALUES (1)")
                try tx.transaction { _ in }
            }
        }
        #expect(error?.kind == .protocolError)
        #expect(try count(connection) == 0)
    }
}
