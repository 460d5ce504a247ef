@testable import Ferry
import FerryPostgres
import FerryTestSupport
import Testing

/// The typed SQL boundary's statements: values interpolated as binds
/// (`SQLQuery`), parameters bound once and named by placeholder
/// (`SQLBinds`), identifiers only as introspected names; and what a
/// mistake gives over a real connection: a clear error, not a crash.
@Suite struct SQLQueryTests {
    @Test func bindsNumberThemselvesInTheOrderWritten() {
        let table = SQLIdentifier(schema: "app", name: "study sets")
        let query: SQLQuery = """
            SELECT t.id FROM \(id: table) t WHERE t.owner = \(bind: "ann") AND t.rank > \(bind: 3) AND \(bind: true)
            """
        #expect(query.sql == #"SELECT t.id FROM "app"."study sets" t WHERE t.owner = $1 AND t.rank > $2 AND $3"#)
        #expect(query.binds == [.text("ann"), .int(3), .bool(true)])
        #expect(PlannedStatement(query) == PlannedStatement(query.sql, query.binds))
        let plain: SQLQuery = "SELECT 1"
        #expect(plain.statement == PlannedStatement("SELECT 1"))
    }

    @Test func identifiersAreQuotedEvenWhenTheyHoldQuotes() {
        let odd = SQLIdentifier(#"we"ird"#)
        let query: SQLQuery = "SELECT \(id: odd) FROM t WHERE x = \(bind: #"a"b"#)"
        #expect(query.sql == #"SELECT "we""ird" FROM t WHERE x = $1"#)
        #expect(query.binds == [.text(#"a"b"#)])
    }

    @Test func aParameterBoundOnceIsNamedAgainByItsPlaceholder() {
        var binds = SQLBinds()
        let xid = binds.bind(.text("42"))
        let limit = binds.bind(.int(11))
        let statement = binds.statement("SELECT \(xid)::xid8, \(xid)::xid8 < \(xid)::xid8, \(limit) - 1")
        #expect(statement.sql == "SELECT $1::xid8, $1::xid8 < $1::xid8, $2 - 1")
        #expect(statement.binds == [.text("42"), .int(11)])
    }

    @Test func theCursorIsBoundInOneOrderWhateverItsKind() {
        var start = SQLBinds()
        let bound = ChangeCursor.start.bind(into: &start)
        #expect(start.values == [.text("0"), .bool(true), .bool(false), .null, .text("0")])
        #expect([bound.xid, bound.isStart, bound.isPosition, bound.id, bound.base].map(\.description) == ["$1", "$2", "$3", "$4", "$5"])
        var position = SQLBinds()
        _ = ChangeCursor(afterXID: 7, position: ("terms", "t-1"), base: 9).bind(into: &position)
        #expect(position.values == [.text("7"), .bool(false), .bool(true), .text("t-1"), .text("9")])
    }

    /// Over a real connection: an interpolated statement runs, its row is
    /// read by name, and a statement whose text names a parameter it does
    /// not bind fails with PostgreSQL's own message, which names the counts.
    @Test func aStatementRunsAndABindMismatchIsAClearError() throws {
        let connection = try PostgresConnection(url: TestEnvironment.ownerURL())
        let query: SQLQuery = "SELECT \(bind: 20)::int + \(bind: 22)::int AS answer, \(bind: "x") AS name"
        let statement = query.statement.postgres
        let result = try connection.pipeline([statement], transaction: false)[0]
        let answer = try result.column("answer", as: Int.self)
        #expect(try result.first?.decode(answer) == 42)
        // A placeholder from another statement's binds, past this one's.
        var binds = SQLBinds(), other = SQLBinds()
        let one = binds.bind(.int(1))
        _ = other.bind(.int(1))
        let foreign = other.bind(.int(2))
        let mismatched = binds.statement("SELECT \(one)::int AS a, \(foreign)::int AS b").postgres
        let error = try #require(throws: PostgresError.self) { try connection.pipeline([mismatched], transaction: false) }
        #expect(error.message.contains("bind message supplies 1 parameters"), "\(error.message)")
    }
}
