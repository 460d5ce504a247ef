@testable import Ferry
import FerryPostgres
import FerryTestSupport
import Testing

/// Ferry's sessions run with JIT off (`database.jit`), because PostgreSQL
/// decides JIT from a plan's estimated cost, and a sync page's estimate passes
/// its thresholds at real table sizes: every request then compiled hundreds of
/// functions, for 0.1 to 2 s (issue 25). Setting every threshold to zero makes
/// each statement look as costly as it would at a million rows or more.
@Suite struct SessionJITTests {
    static let thresholdsAtZero = "SET LOCAL jit_above_cost = 0; SET LOCAL jit_inline_above_cost = 0; SET LOCAL jit_optimize_above_cost = 0"

    @Test func syncStatementsNeverJITCompileOnFerrysConnections() throws {
        let server = try TestServer()
        defer { server.stop() }
        let reader = try server.user("reader")
        _ = try server.makeTerms(in: try server.makeSet(for: reader.id), count: 20)
        let catalog = server.app.schema.catalog
        let scopes = try AccessScope.load(schema: "app", catalog: catalog, database: server.app.database)
        let plan = ChangesPlan(
            request: ChangesRequest(since: .start, limit: 500, resources: catalog.names.sorted(by: ChangeOrder.precedes)),
            catalog: catalog, scopes: scopes)

        for statement in [plan.statement, plan.activityStatement] {
            let functions = try server.app.pool.withConnection { connection in
                #expect(try connection.query("SHOW jit").rows[0][0] == "off")
                return try Self.jitFunctions(connection, statement, userID: reader.id)
            }
            #expect(functions == 0)
        }

        // The same statement on a connection without Ferry's settings compiles,
        // so the check above can fail (where this PostgreSQL was built with JIT).
        let plain = try PostgresConnection(url: server.database.appURL)
        defer { plain.close() }
        if try plain.query("SELECT pg_jit_available()").rows[0][0] == "t" {
            #expect(try Self.jitFunctions(plain, plan.statement, userID: reader.id) > 0)
        }
    }

    @Test func jitCanBeTurnedBackOn() throws {
        let server = try TestServer { $0.database.jit = true }
        defer { server.stop() }
        let setting = try server.app.pool.withConnection { try $0.query("SHOW jit").rows[0][0] }
        #expect(setting == "on")
    }

    static func jitFunctions(_ connection: PostgresConnection, _ statement: PlannedStatement, userID: String) throws -> Int {
        let statement = statement.postgres
        try connection.execute("BEGIN")
        defer { _ = try? connection.execute("ROLLBACK") }
        _ = try connection.query("SELECT set_config('ferry.user_id', $1, true)", [userID])
        try connection.execute(thresholdsAtZero)
        let json = try connection.query("EXPLAIN (ANALYZE, FORMAT JSON) " + statement.sql, statement.params).rows[0][0] ?? ""
        return try ExecutedPlan(json: json).jitFunctions
    }
}
