import FerryTestSupport
import Glibc
import Testing
@testable import FerryPostgres

@Suite struct ConnectionTests {
    @Test func parametersAndNulls() throws {
        let connection = try ownerConnection()
        let result = try connection.query("SELECT $1::int + 1 AS answer, $2::text IS NULL AS missing, $2::text AS nothing", ["41", nil])
        #expect(result.columns == ["answer", "missing", "nothing"])
        #expect(result.rows.count == 1)
        let row = try #require(result.first)
        #expect(row[0] == "42")
        #expect(row["missing"] == "t")
        #expect(row["nothing"] == nil)
        #expect(row[7] == nil)
        #expect(row["no_such_column"] == nil)
        #expect(result.commandTag == "SELECT 1")
        #expect(result.affectedRows == 1)
    }

    @Test func unicodeRoundTrips() throws {
        let connection = try ownerConnection()
        let text = "héllo wörld 🚀 日本語 \u{1F1EB}\u{1F1F7} \"quotes\" 'single' \\ back"
        let row = try #require(connection.query("SELECT $1::text AS t, length($1::text) AS n", [text]).first)
        #expect(row["t"] == text)
        #expect(try row.int("n") == text.unicodeScalars.count)
    }

    @Test func typedAccessors() throws {
        let connection = try ownerConnection()
        let row = try #require(
            connection.query(
                """
                SELECT 42::int AS i, 9000000000::int8 AS big, true AS yes, false AS no, 1.5::float8 AS d,
                       'Infinity'::float8 AS inf, 12.25::numeric AS num, NULL::int AS null_int, 'abc' AS word
                """
            ).first)
        #expect(try row.int("i") == 42)
        #expect(try row.int(0) == 42)
        #expect(try row.int64("big") == 9_000_000_000)
        #expect(try row.bool("yes") == true)
        #expect(try row.bool("no") == false)
        #expect(try row.double("d") == 1.5)
        #expect(try row.double("inf") == .infinity)
        #expect(try row.double("num") == 12.25)
        #expect(try row.int("null_int") == nil)
        #expect(try row.string("word") == "abc")
        #expect(postgresError { try row.int("word") }?.kind == .decoding)
        #expect(postgresError { try row.bool("i") }?.kind == .decoding)
        #expect(postgresError { try row.string("missing") }?.kind == .decoding)
        #expect(postgresError { try row.int(99) }?.kind == .decoding)
    }

    @Test(arguments: [3, 40])
    func columnsByNameFirstWinsNarrowAndWide(width: Int) throws {
        let connection = try ownerConnection()
        // `width` columns c0, c1, ...; then a repeat of c1 with another value.
        let columns = (0..<width).map { "\($0) AS c\($0)" }.joined(separator: ", ")
        let row = try #require(try connection.query("SELECT \(columns), 'again' AS c1").first)
        #expect(row.count == width + 1)
        #expect(row["c0"] == "0")
        #expect(row["c1"] == "1")
        #expect(row["c\(width - 1)"] == String(width - 1))
        #expect(row["missing"] == nil)
        #expect(try row.int("c1") == 1)
        #expect(row[width] == "again")
    }

    @Test func commandTagsAndAffectedRows() throws {
        let connection = try ownerConnection()
        try connection.execute("CREATE TEMP TABLE counted (n int)")
        let insert = try connection.query("INSERT INTO counted SELECT generate_series(1, 3)")
        #expect(insert.commandTag == "INSERT 0 3")
        #expect(insert.affectedRows == 3)
        let update = try connection.query("UPDATE counted SET n = n * 10 WHERE n > $1", ["1"])
        #expect(update.commandTag == "UPDATE 2")
        #expect(update.affectedRows == 2)
        let select = try connection.query("SELECT n FROM counted ORDER BY n")
        #expect(select.rows.map { $0[0] } == ["1", "20", "30"])
        #expect(try connection.query("SELECT 1 AS id, 2 AS id").first?["id"] == "1")
    }

    @Test func executeRunsScripts() throws {
        let connection = try ownerConnection()
        try connection.execute(
            """
            CREATE TEMP TABLE scripted (id int primary key, label text);
            INSERT INTO scripted VALUES (1, 'one'), (2, 'two');
            UPDATE scripted SET label = upper(label);
            """)
        #expect(try connection.query("SELECT string_agg(label, ',' ORDER BY id) FROM scripted").first?[0] == "ONE,TWO")
        try connection.execute("")
    }

    @Test func nulBytesInParametersAreRejected() throws {
        let connection = try ownerConnection()
        let error = postgresError { try connection.query("SELECT $1::text", ["a\u{0}b"]) }
        #expect(error?.sqlState == "22021")
        #expect(try connection.query("SELECT 1").first?[0] == "1")
    }

    @Test func applicationNameAndConnectTimeoutDefaults() throws {
        let url = try TestEnvironment.ownerURL()
        let connection = try PostgresConnection(url: url, applicationName: "named")
        #expect(try connection.query("SHOW application_name").first?[0] == "named")
        #expect(connection.parameter("connect_timeout") == "5")
        #expect(connection.parameter("password") == nil)

        // Without a name the session reports libpq's own default: PGAPPNAME, else none.
        let unnamed = try PostgresConnection(url: url)
        let environment = getenv("PGAPPNAME").map { String(cString: $0) } ?? ""
        #expect(try unnamed.query("SHOW application_name").first?[0] == environment)

        let separator = url.contains("?") ? "&" : "?"
        let custom = try PostgresConnection(
            url: url + separator + "application_name=custom&connect_timeout=2", applicationName: "named")
        #expect(try custom.query("SHOW application_name").first?[0] == "custom")
        #expect(custom.parameter("connect_timeout") == "2")
    }

    @Test func conninfoStringsWork() throws {
        let owner = try OwnerAddress()
        let connection = try PostgresConnection(
            url: "host=\(owner.host) port=\(owner.port) user=\(owner.user) password='\(owner.password)' dbname=\(owner.database) connect_timeout=3",
            applicationName: "named"
        )
        #expect(try connection.query("SELECT current_user").first?[0] == owner.user)
        #expect(connection.parameter("connect_timeout") == "3")
        #expect(connection.parameter("application_name") == "named")
    }

    @Test func multiHostURLsPassThrough() throws {
        let owner = try OwnerAddress()
        let deadPort = try TemporaryPostgres.freePort()
        let connection = try PostgresConnection(
            url: "postgresql://\(owner.user):\(owner.password)@127.0.0.1:\(deadPort),\(owner.host):\(owner.port)/\(owner.database)"
        )
        #expect(try connection.query("SELECT 1").first?[0] == "1")
    }

    @Test func connectionFailuresAreConnectionErrors() throws {
        let owner = try OwnerAddress()
        let deadPort = try TemporaryPostgres.freePort()
        let refused = postgresError { try PostgresConnection(url: "postgresql://\(owner.user)@127.0.0.1:\(deadPort)/\(owner.database)") }
        #expect(refused?.kind == .connection)

        let wrongPassword = postgresError {
            try PostgresConnection(url: "postgresql://\(owner.user):not-the-password-xyz@\(owner.host):\(owner.port)/\(owner.database)")
        }
        #expect(wrongPassword?.kind == .connection)
        #expect(wrongPassword?.message.contains("not-the-password-xyz") == false)

        let malformed = postgresError { try PostgresConnection(url: "postgresql://[::1/ferry") }
        #expect(malformed?.kind == .connection)
    }

    @Test func terminatedSessionIsBroken() throws {
        let victim = try ownerConnection()
        let killer = try ownerConnection()
        #expect(!victim.isBroken)
        _ = try killer.query("SELECT pg_terminate_backend($1)", [String(victim.backendPID)])
        let error = postgresError { try victim.query("SELECT 1") }
        #expect(error?.kind == .connection)
        #expect(victim.isBroken)
        #expect(postgresError { try victim.query("SELECT 1") }?.kind == .connection)
        victim.close()
        victim.close()
        #expect(victim.isBroken)
    }
}
