@testable import Ferry
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// The statements a write runs besides its own row: the rank neighbours a
    /// computed rank (`"last"`, `{"after": id}`) or a move reads. Judged like
    /// `CostTests`, on executed nodes and buffers at two table sizes.
    @Suite struct WriteCostTests {
        @Test func rankNeighboursAreReadByIndexWhateverTheTableHolds() throws {
            let sizes = CostTests.sizes
            var buffers: [Int] = []
            for rows in sizes {
                let server = try TestServer()
                defer { server.stop() }
                let other = try server.user("bulk")
                _ = try server.ownerQuery(
                    "INSERT INTO app.study_sets (creator_id, title) SELECT $1, 'bulk ' || i FROM generate_series(1, $2) i",
                    [other.id, String(rows / 100)])
                _ = try server.ownerQuery(
                    """
                    INSERT INTO app.terms (set_id, word, rank)
                    SELECT s.id, 'w' || i, lpad(i::text, 4, '0') FROM app.study_sets s CROSS JOIN generate_series(1, 100) i
                    """)
                _ = try server.ownerQuery("ANALYZE app.terms, app.study_sets")
                let me = try server.user("writer")
                let set = try server.makeSet(for: me.id)
                let moved = try server.makeTerms(in: set, count: 50)
                let terms = try #require(server.app.schema.catalog["terms"])
                // A create into the set and a move of one of its rows, as one statement reads them.
                let statement = RankRewriter.neighboursStatement(terms, parent: "set_id", parents: [set, "not-an-id"], selves: [moved[7]]).postgres
                let plan = try server.app.pool.withConnection { connection in
                    try connection.execute("BEGIN")
                    defer { _ = try? connection.execute("ROLLBACK") }
                    _ = try connection.query("SELECT set_config('ferry.user_id', $1, true)", [me.id])
                    let rows = try connection.query(statement.sql, statement.params).rows
                    #expect(rows.filter { $0["own"] == "f" }.count == 50, "the set's live rows")
                    #expect(rows.filter { $0["own"] == "t" }.map { $0["id"] } == [moved[7]], "the moved row")
                    let json = try connection.query("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement.sql, statement.params).rows[0][0] ?? ""
                    return try ExecutedPlan(json: json)
                }
                let scans = plan.executedSeqScans(of: ["terms"])
                #expect(scans.isEmpty, "rank neighbours at \(rows) rows: \(scans)\n\(plan.text)")
                print("cost: rank neighbours at \(rows) rows: \(plan.buffers) buffers, execution \(plan.executionMs) ms")
                buffers.append(plan.buffers)
            }
            #expect(buffers[1] <= 2 * buffers[0] + 16, "\(buffers)")
        }
    }
}
