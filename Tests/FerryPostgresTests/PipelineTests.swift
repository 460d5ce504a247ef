import Testing
@testable import FerryPostgres

@Suite struct PipelineTests {
    @Test(arguments: [false, true])
    func requestShapedPipeline(prepared: Bool) throws {
        let connection = try ownerConnection(preparedStatements: prepared)
        for round in 0..<3 {
            let results = try connection.pipeline([
                PostgresStatement("SELECT set_config('ferry.user_id', $1, true)", ["user-\(round)"]),
                PostgresStatement("SELECT current_setting('ferry.user_id') AS who, $1::int * 2 AS twice", ["21"]),
                PostgresStatement("SELECT NULL::text AS nothing"),
            ])
            #expect(results.count == 3)
            #expect(results[0].first?[0] == "user-\(round)")
            #expect(results[1].first?["who"] == "user-\(round)")
            #expect(results[1].first?["twice"] == "42")
            #expect(results[2].first?["nothing"] == nil)
            #expect(results[2].columns == ["nothing"])
        }
        // set_config(..., true) is transaction-local: gone after the pipeline's COMMIT.
        #expect(try connection.query("SELECT current_setting('ferry.user_id', true)").first?[0] ?? "" == "")
        #expect(!connection.inTransaction)
        if prepared {
            // Three pipelined statements reused over three rounds, the check above, and this query.
            let names = try connection.query("SELECT name FROM pg_prepared_statements ORDER BY name").rows.map { $0[0] }
            #expect(names == ["stmt_0", "stmt_1", "stmt_2", "stmt_3", "stmt_4"])
        }
    }

    @Test(arguments: [false, true])
    func failureInTheMiddleRollsBack(prepared: Bool) throws {
        let connection = try ownerConnection(preparedStatements: prepared)
        try connection.execute("CREATE TEMP TABLE piped (id int PRIMARY KEY)")
        let error = try #require(
            postgresError {
                try connection.pipeline([
                    PostgresStatement("INSERT INTO piped VALUES ($1)", ["1"]),
                    PostgresStatement("INSERT INTO piped VALUES ($1)", ["1"]),
                    PostgresStatement("INSERT INTO piped VALUES ($1)", ["3"]),
                ])
            })
        #expect(error.kind == .server)
        #expect(error.sqlState == "23505")
        #expect(error.statementIndex == 1)
        #expect(try connection.query("SELECT count(*) FROM piped").first?.int(0) == 0)
        #expect(!connection.inTransaction)
        #expect(!connection.isBroken)
        let again = try connection.pipeline([PostgresStatement("INSERT INTO piped VALUES ($1) RETURNING id", ["7"])])
        #expect(again.first?.first?["id"] == "7")
        #expect(try connection.query("SELECT count(*) FROM piped").first?.int(0) == 1)
    }

    @Test(arguments: [false, true])
    func syntaxErrorInFirstStatement(prepared: Bool) throws {
        let connection = try ownerConnection(preparedStatements: prepared)
        let error = postgresError {
            try connection.pipeline([PostgresStatement("SELEC 1"), PostgresStatement("SELECT 2")])
        }
        #expect(error?.sqlState == "42601")
        #expect(error?.statementIndex == 0)
        #expect(error?.position == 1)
        #expect(try connection.pipeline([PostgresStatement("SELECT 2")]).first?.first?[0] == "2")
    }

    /// The prepared-statement cache hashes only a statement's length and its
    /// first and last bytes: texts alike in all three must still be told apart.
    @Test(arguments: [false, true])
    func statementsAlikeAtBothEndsStayDistinct(prepared: Bool) throws {
        let connection = try ownerConnection(preparedStatements: prepared)
        let edge = String(repeating: "x", count: PreparedStatementKey.hashedEdge)
        func statement(_ middle: String) -> PostgresStatement {
            PostgresStatement("SELECT '\(edge)' AS head, '\(middle)' AS middle, $1::text AS tail, '\(edge)' AS edge", ["t"])
        }
        let (a, b) = (statement("aaaa"), statement("bbbb"))
        #expect(a.sql.utf8.count == b.sql.utf8.count && a.sql != b.sql)
        #expect(PreparedStatementKey(sql: a.sql).hashValue == PreparedStatementKey(sql: b.sql).hashValue)
        for _ in 0..<2 {
            let results = try connection.pipeline([a, b, a])
            #expect(results.map { $0.first?["middle"] } == ["aaaa", "bbbb", "aaaa"])
        }
        if prepared {
            let count = try connection.query("SELECT count(*) FROM pg_prepared_statements WHERE strpos(statement, 'AS mid' || 'dle') > 0")
            #expect(try count.first?.int(0) == 2)
        }
    }

    /// Parameters are copied into one buffer: NULLs, empty strings and one
    /// larger than any stack buffer keep their places and their bytes.
    @Test(arguments: [false, true])
    func parametersOfEveryShapeArriveIntact(prepared: Bool) throws {
        let connection = try ownerConnection(preparedStatements: prepared)
        let large = String(repeating: "ä0", count: 100_000)
        let results = try connection.pipeline([
            PostgresStatement(
                "SELECT $1::text IS NULL AS a, $2::text AS b, $3::text = repeat('ä0', 100000) AS c, $4::text IS NULL AS d, $5::text AS e",
                [nil, "", large, nil, "ü"])
        ])
        let row = try #require(results.first?.first)
        #expect(row["a"] == "t")
        #expect(row["b"] == "")
        #expect(row["c"] == "t")
        #expect(row["d"] == "t")
        #expect(row["e"] == "ü")
    }

    @Test func commitFailureReportsStatementCount() throws {
        let connection = try ownerConnection()
        try connection.execute(
            """
            CREATE TEMP TABLE deferred (id int, CONSTRAINT deferred_id_key UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)
            """)
        let error = try #require(
            postgresError {
                try connection.pipeline([
                    PostgresStatement("INSERT INTO deferred VALUES (1)"),
                    PostgresStatement("INSERT INTO deferred VALUES (1)"),
                ])
            })
        #expect(error.sqlState == "23505")
        #expect(error.constraint == "deferred_id_key")
        #expect(error.statementIndex == 2)
        #expect(try connection.query("SELECT count(*) FROM deferred").first?.int(0) == 0)
        #expect(!connection.inTransaction)
    }

    @Test func withoutExplicitTransactionStillAtomicUpToSync() throws {
        let connection = try ownerConnection()
        try connection.execute("CREATE TEMP TABLE implicit (id int PRIMARY KEY)")
        let ok = try connection.pipeline(
            [
                PostgresStatement("INSERT INTO implicit VALUES (1)"),
                PostgresStatement("SELECT count(*) FROM implicit"),
            ], transaction: false)
        #expect(ok[1].first?[0] == "1")
        let error = postgresError {
            try connection.pipeline(
                [
                    PostgresStatement("INSERT INTO implicit VALUES (2)"),
                    PostgresStatement("INSERT INTO implicit VALUES (1)"),
                ], transaction: false)
        }
        #expect(error?.statementIndex == 1)
        #expect(try connection.query("SELECT count(*) FROM implicit").first?.int(0) == 1)
    }

    @Test func callerSettingIsTransactionLocalWithoutExplicitTransaction() throws {
        let connection = try ownerConnection(preparedStatements: true)
        for round in 0..<2 {
            let results = try connection.pipeline(
                [
                    PostgresStatement("SELECT set_config('ferry.user_id', $1, true)", ["user-\(round)"]),
                    PostgresStatement("SELECT current_setting('ferry.user_id') AS who"),
                ], transaction: false)
            #expect(results[1].first?["who"] == "user-\(round)")
            #expect(try connection.query("SELECT current_setting('ferry.user_id', true)").first?[0] ?? "" == "")
        }
    }

    @Test func failingImplicitCommitIsReportedAndLeavesTheConnectionUsable() throws {
        let connection = try ownerConnection()
        try connection.execute("CREATE TEMP TABLE deferred (id int PRIMARY KEY)")
        try connection.execute(
            """
            CREATE TEMP TABLE deferred_ref (id int PRIMARY KEY,
              parent int REFERENCES deferred DEFERRABLE INITIALLY DEFERRED)
            """)
        for transaction in [false, true] {
            let error = postgresError {
                try connection.pipeline(
                    [
                        PostgresStatement("INSERT INTO deferred_ref VALUES (1, 42)"),
                        PostgresStatement("SELECT count(*) FROM deferred_ref"),
                    ], transaction: transaction)
            }
            #expect(error?.sqlState == "23503", "transaction: \(transaction)")
            #expect(error?.statementIndex == 2, "transaction: \(transaction)")
            #expect(!connection.inTransaction)
            #expect(try connection.query("SELECT count(*) FROM deferred_ref").first?.int(0) == 0)
            #expect(try connection.pipeline([PostgresStatement("SELECT 7")], transaction: transaction).first?.first?[0] == "7")
        }
    }

    @Test func manyStatementsAndEmptyPipeline() throws {
        let connection = try ownerConnection()
        #expect(try connection.pipeline([]).isEmpty)
        let statements = (0..<300).map { PostgresStatement("SELECT $1::int AS n, repeat('x', 1000) AS pad", [String($0)]) }
        let results = try connection.pipeline(statements)
        #expect(results.count == 300)
        #expect(results.map { $0.first?["n"] } == (0..<300).map { String($0) })
    }

    @Test func pipelineInsideOpenTransactionIsRefused() throws {
        let connection = try ownerConnection()
        try connection.execute("BEGIN")
        #expect(postgresError { try connection.pipeline([PostgresStatement("SELECT 1")]) }?.kind == .protocolError)
        let inner = try connection.pipeline([PostgresStatement("SELECT 1")], transaction: false)
        #expect(inner.first?.first?[0] == "1")
        try connection.execute("ROLLBACK")
    }

    @Test func nulParameterNamesItsStatement() throws {
        let connection = try ownerConnection()
        let error = postgresError {
            try connection.pipeline([PostgresStatement("SELECT 1"), PostgresStatement("SELECT $1::text", ["\u{0}"])])
        }
        #expect(error?.statementIndex == 1)
        #expect(error?.sqlState == "22021")
    }

    @Test func brokenConnectionInPipeline() throws {
        let victim = try ownerConnection()
        let killer = try ownerConnection()
        _ = try killer.query("SELECT pg_terminate_backend($1)", [String(victim.backendPID)])
        let error = postgresError { try victim.pipeline([PostgresStatement("SELECT 1"), PostgresStatement("SELECT 2")]) }
        #expect(error?.kind == .connection)
        #expect(victim.isBroken)
    }
}
