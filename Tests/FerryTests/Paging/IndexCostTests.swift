@testable import Ferry
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// An Index of a member table without a filter on its scope column (every
/// term the caller may read) costs what it returns, not what the table holds
/// (issue 25): judged by the nodes `EXPLAIN ANALYZE` executed and the buffers
/// they read, over a small and a ten times larger table of another user's
/// terms. Sizes: `FERRY_COST_ROWS` (default `20000,200000`), as the feed's
/// cost test.
@Suite struct IndexCostTests {
    struct Measurement {
        let firstPage: ExecutedPlan
        let onePage: ExecutedPlan
        let total: Int
    }

    @Test func unfilteredIndexOfAMemberTableCostsWhatItReturns() throws {
        let sizes = ChangesSuites.CostTests.sizes
        let small = try Self.measure(rows: sizes[0])
        let large = try Self.measure(rows: sizes[1])
        #expect(small.total == 200 && large.total == 200, "the reader sees its own 100 terms and a shared set's 100")
        for (name, s, l) in [
            ("page 1 and its snapshot", small.firstPage, large.firstPage),
            ("the one-page statement", small.onePage, large.onePage),
        ] {
            print(
                "cost: index of terms, \(name): \(s.buffers) buffers at \(sizes[0]) rows, \(l.buffers) at \(sizes[1]); "
                    + "execution \(s.executionMs) / \(l.executionMs) ms")
            let scans = s.executedSeqScans(of: ["terms"]) + l.executedSeqScans(of: ["terms"])
            #expect(scans.isEmpty, "\(name): executed sequential scans of \(scans)\n\(l.text)")
            #expect(l.buffers <= 2 * s.buffers + 16, "\(name): \(s.buffers) buffers at \(sizes[0]) rows, \(l.buffers) at \(sizes[1])\n\(l.text)")
        }
    }

    /// Seeds `rows` terms of another user (sets of 100), a reader with a set
    /// of its own and one of the other's sets shared with it, and explains the
    /// reader's unfiltered Index of terms as Ferry plans it.
    static func measure(rows: Int) throws -> Measurement {
        let server = try TestServer()
        defer { server.stop() }
        let other = try ChangesSuites.CostTests.seedOtherUser(server, rows: rows)
        let reader = try server.user("reader")
        let own = try server.makeSet(for: reader.id)
        _ = try server.makeTerms(in: own, count: 100)
        let shared = try #require(
            try server.ownerQuery(
                "SELECT id FROM app.study_sets WHERE creator_id = $1 ORDER BY title LIMIT 1",
                [other.id]
            ).rows.first?[0])
        _ = try server.ownerQuery("INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $2)", [shared, reader.id])
        _ = try server.ownerQuery("ANALYZE app.terms, app.study_sets, app.set_collaborators")

        let catalog = server.app.schema.catalog
        let terms = try #require(catalog["terms"])
        let query = try IndexQuery([("limit", "50")], resource: terms, defaultLimit: 100, maxLimit: 1_000)
        let scopes = try ChangesSuites.CostTests.scopes(server)
        let plan = IndexSQL(resource: terms, query: query, drives: IndexSQL.drives(terms, catalog: catalog, scopes: scopes, query: query))
        #expect(plan.drives.count == 1, "terms are read through their set (migration 0015)")
        let first = PagingSQL.firstPage(plan.paged, limit: 50)
        let total = Int(try ChangesSuites.CostTests.value(server, statement: first, userID: reader.id, column: 1) ?? "") ?? -1
        return Measurement(
            firstPage: try ChangesSuites.CostTests.explain(server, statement: first, userID: reader.id),
            onePage: try ChangesSuites.CostTests.explain(server, statement: PlannedStatement(plan.sql, query.binds), userID: reader.id),
            total: total)
    }
}
