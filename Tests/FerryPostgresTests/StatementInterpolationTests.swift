import Testing
@testable import FerryPostgres

/// `PostgresStatement` written as one interpolated string, as the modules
/// below Ferry bind (migrations, test support): each `\(bind:)` appends its
/// value and its `$n`, in the order written, and runs as written.
@Suite struct StatementInterpolationTests {
    @Test func bindsNumberThemselvesInTheOrderWritten() {
        let name: String? = nil
        let statement: PostgresStatement = """
            SELECT \(bind: "ann"), \(bind: 42)::int, \(bind: Int64(-7))::bigint, \(bind: true), \(bind: name)
            """
        #expect(statement.sql == "SELECT $1, $2::int, $3::bigint, $4, $5")
        #expect(statement.params == ["ann", "42", "-7", "true", nil])
        let plain: PostgresStatement = "SELECT 1"
        #expect(plain == PostgresStatement("SELECT 1"))
    }

    @Test func anInterpolatedStatementRuns() throws {
        let connection = try ownerConnection()
        defer { connection.close() }
        let missing: String? = nil
        let result = try connection.query(
            """
            SELECT \(bind: 20)::int + \(bind: 22)::int AS answer, \(bind: #"it's "quoted""#) AS text,
                   \(bind: missing)::text IS NULL AS null, \(bind: false)::boolean AS flag
            """ as PostgresStatement)
        let row = try #require(result.first)
        #expect(try row.int("answer") == 42)
        #expect(try row.string("text") == #"it's "quoted""#)
        #expect(try row.bool("null") == true)
        #expect(try row.bool("flag") == false)
    }
}
