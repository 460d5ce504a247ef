import Testing
@testable import FerryPostgres

@Suite struct ErrorTests {
    @Test func uniqueViolationCarriesConstraint() throws {
        let connection = try ownerConnection()
        try connection.execute("CREATE TEMP TABLE uniq (id int, name text, CONSTRAINT uniq_name_key UNIQUE (name))")
        _ = try connection.query("INSERT INTO uniq VALUES (1, $1)", ["a"])
        let error = try #require(postgresError { try connection.query("INSERT INTO uniq VALUES (2, $1)", ["a"]) })
        #expect(error.kind == .server)
        #expect(error.sqlState == "23505")
        #expect(error.constraint == "uniq_name_key")
        #expect(error.table == "uniq")
        #expect(error.schema?.hasPrefix("pg_temp") == true)
        #expect(error.detail?.contains("already exists") == true)
        #expect(error.severity == "ERROR")
        #expect(try connection.query("SELECT count(*) FROM uniq").first?[0] == "1")
    }

    @Test func checkAndNotNullViolations() throws {
        let connection = try ownerConnection()
        try connection.execute(
            """
            CREATE TEMP TABLE checked (qty int NOT NULL, CONSTRAINT checked_qty_positive CHECK (qty > 0))
            """)
        let check = postgresError { try connection.query("INSERT INTO checked VALUES ($1)", ["-1"]) }
        #expect(check?.sqlState == "23514")
        #expect(check?.constraint == "checked_qty_positive")
        let notNull = postgresError { try connection.query("INSERT INTO checked VALUES ($1)", [nil]) }
        #expect(notNull?.sqlState == "23502")
        #expect(notNull?.column == "qty")
        #expect(notNull?.table == "checked")
    }

    @Test func syntaxErrorHasPosition() throws {
        let connection = try ownerConnection()
        let error = try #require(postgresError { try connection.query("SELECT * FROM WHERE x = 1") })
        #expect(error.kind == .server)
        #expect(error.sqlState == "42601")
        #expect(error.position == 15)

        let script = "SELECT 1;\nSELEC 2;"
        let scriptError = try #require(postgresError { try connection.execute(script) })
        #expect(scriptError.sqlState == "42601")
        #expect(scriptError.position == 11)
    }

    @Test func positionCountsCharactersNotBytes() throws {
        let connection = try ownerConnection()
        let error = postgresError { try connection.query("SELECT 'ééé', nope") }
        #expect(error?.sqlState == "42703")
        #expect(error?.position == 15)
    }

    @Test func hintAndContextFromRaise() throws {
        let connection = try ownerConnection()
        let error = try #require(
            postgresError {
                try connection.execute(
                    """
                    DO $$ BEGIN RAISE EXCEPTION 'custom failure' USING ERRCODE = 'P0001', HINT = 'try again', DETAIL = 'some detail'; END $$
                    """)
            })
        #expect(error.sqlState == "P0001")
        #expect(error.message == "custom failure")
        #expect(error.hint == "try again")
        #expect(error.detail == "some detail")
        #expect(error.context?.contains("PL/pgSQL") == true)
    }

    @Test func classification() {
        #expect(PostgresError.classify(sqlState: "08006", severity: "FATAL", connectionDead: false) == .connection)
        #expect(PostgresError.classify(sqlState: "08P01", severity: "ERROR", connectionDead: false) == .connection)
        #expect(PostgresError.classify(sqlState: "57P01", severity: "ERROR", connectionDead: false) == .connection)
        #expect(PostgresError.classify(sqlState: "57P03", severity: "ERROR", connectionDead: false) == .connection)
        #expect(PostgresError.classify(sqlState: "57014", severity: "ERROR", connectionDead: false) == .timeout)
        #expect(PostgresError.classify(sqlState: "23505", severity: "ERROR", connectionDead: false) == .server)
        #expect(PostgresError.classify(sqlState: "23505", severity: "ERROR", connectionDead: true) == .connection)
        #expect(PostgresError.classify(sqlState: nil, severity: nil, connectionDead: true) == .connection)
        #expect(PostgresError.classify(sqlState: nil, severity: nil, connectionDead: false) == .protocolError)
    }
}
