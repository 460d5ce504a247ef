@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// What the feed's statements cost as the tables grow, judged by what runs:
    /// the nodes `EXPLAIN ANALYZE` executed (never the planner's choice for a
    /// branch that did not run, which any point release may change) and the
    /// shared buffers they touched. The same scenario runs over a small and a
    /// ten times larger table; a statement whose cost follows the table, not
    /// what it returns, reads many more buffers at the larger size.
    ///
    /// `FERRY_COST_ROWS` sets the two sizes (default `20000,200000`).
    @Suite struct CostTests {
        static let sizes: [Int] = {
            let raw = ProcessInfo.processInfo.environment["FERRY_COST_ROWS"] ?? "20000,200000"
            let sizes = raw.split(separator: ",").compactMap { Int($0) }
            return sizes.count == 2 ? sizes : [20_000, 200_000]
        }()
        /// The member tables the seed grows; an executed sequential scan of one
        /// of them is a cost that follows the table.
        static let grownTables: Set<String> = ["terms", "study_sets"]

        @Test func feedStatementsCostWhatTheyReturnNotWhatTheTableHolds() throws {
            let small = try Self.measure(rows: Self.sizes[0])
            let large = try Self.measure(rows: Self.sizes[1])
            for (name, s, l) in [("page with grants and revocations", small.page, large.page),
                                 ("empty poll (activity check)", small.activity, large.activity),
                                 ("page at the frontier", small.frontierPage, large.frontierPage)] {
                print("cost: \(name): \(s.buffers) buffers at \(Self.sizes[0]) rows, \(l.buffers) at \(Self.sizes[1]); "
                      + "execution \(s.executionMs) / \(l.executionMs) ms")
                if ProcessInfo.processInfo.environment["FERRY_COST_PLANS"] != nil { print(s.text); print(l.text) }
                // terms is the table that grows; at the larger size the sets
                // outgrow the few pages that any planner rightly reads whole.
                let smallScans = s.executedSeqScans(of: ["terms"]), largeScans = l.executedSeqScans(of: Self.grownTables)
                #expect(smallScans.isEmpty, "\(name): executed sequential scans of \(smallScans)\n\(s.text)")
                #expect(largeScans.isEmpty, "\(name): executed sequential scans of \(largeScans)\n\(l.text)")
                // Per returned row, an index probe may descend one more level in a
                // ten times larger tree (3 buffers become 4); a scan of the table
                // reads about ten times more.
                #expect(l.buffers <= 2 * s.buffers + 16,
                        "\(name): \(s.buffers) buffers at \(Self.sizes[0]) rows, \(l.buffers) at \(Self.sizes[1])\n\(l.text)")
            }
            // The page from before the access changes delivers what they brought
            // (each set's 100 terms, granted or revoked), the same at both sizes.
            #expect(small.pageRows == large.pageRows)
            #expect(small.pageRows >= (Self.grants + Self.revocations) * 100)
        }

        static let grants = 4
        static let revocations = 2

        struct Measurement {
            let page: ExecutedPlan
            let pageRows: Int
            let activity: ExecutedPlan
            let frontierPage: ExecutedPlan
        }

        /// Seeds `rows` terms of another user (sets of 100), gives the reader
        /// access to `grants` of those sets and takes `revocations` away, and
        /// explains the reader's page from before those changes, the empty poll
        /// after them, and the full page statement at that frontier.
        static func measure(rows: Int) throws -> Measurement {
            let server = try TestServer()
            defer { server.stop() }
            let other = try seedOtherUser(server, rows: rows)
            _ = try server.ownerQuery("ANALYZE app.terms, app.study_sets")

            let reader = try server.user("reader")
            let own = try server.makeSet(for: reader.id)
            _ = try server.makeTerms(in: own, count: 5)
            let feed = FeedFollower(server: server, token: reader.token)
            try feed.catchUp(pastXID: try server.maxXID(), limit: 5_000, timeout: 300)
            let before = try #require(feed.position)

            // Access changes inside the window: collaborations on some of the
            // other user's sets, and some added and then taken away again.
            let sets = try server.ownerQuery("SELECT id FROM app.study_sets WHERE creator_id = $1 ORDER BY title LIMIT $2",
                                             [other.id, String(grants + revocations)]).rows.compactMap { $0[0] }
            for set in sets {
                _ = try server.ownerQuery("INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $2)", [set, reader.id])
            }
            for set in sets.suffix(revocations) {
                _ = try server.ownerQuery("DELETE FROM app.set_collaborators WHERE set_id = $1 AND user_id = $2", [set, reader.id])
            }

            // The page may serve them once every transaction that was running when
            // they committed has ended, cluster-wide: other suites write meanwhile.
            let xid = try server.maxXID()
            try waitUntil("every transaction older than xid \(xid) to end", within: 120) {
                UInt64(try server.ownerQuery("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").rows[0][0] ?? "0") ?? 0 > xid
            }

            let catalog = server.app.schema.catalog
            let scopes = try scopes(server)
            let resources = catalog.names.sorted(by: ChangeOrder.precedes)
            let pagePlan = ChangesPlan(request: ChangesRequest(since: before, limit: 1_000, resources: resources), catalog: catalog, scopes: scopes)
            let page = try explain(server, statement: pagePlan.statement, userID: reader.id)
            // Column 4 counts the page's entries (at most its limit + 1).
            let pageRows = Int(try value(server, statement: pagePlan.statement, userID: reader.id, column: 3) ?? "") ?? -1

            try feed.catchUp(pastXID: try server.maxXID(), limit: 5_000, timeout: 300)
            let frontier = try #require(feed.position)
            let quiet = ChangesPlan(request: ChangesRequest(since: frontier, limit: 500, resources: resources), catalog: catalog, scopes: scopes)
            return Measurement(
                page: page, pageRows: pageRows,
                activity: try explain(server, statement: quiet.activityStatement, userID: reader.id),
                frontierPage: try explain(server, statement: quiet.statement, userID: reader.id))
        }

        /// Another user's `rows` terms, in sets of 100: the table that grows.
        static func seedOtherUser(_ server: TestServer, rows: Int) throws -> (id: String, token: String) {
            let other = try server.user("bulk")
            _ = try server.ownerQuery("INSERT INTO app.study_sets (creator_id, title) SELECT $1, 'bulk ' || i FROM generate_series(1, $2) i",
                                      [other.id, String(max(1, rows / 100))])
            _ = try server.ownerQuery("""
                INSERT INTO app.terms (set_id, word, definition, rank)
                SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
                  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i WHERE s.creator_id = $1
                """, [other.id])
            return other
        }

        static func scopes(_ server: TestServer) throws -> [AccessScope] {
            try AccessScope.load(schema: "app", catalog: server.app.schema.catalog, database: server.app.database)
        }

        /// Runs `statement` as `userID` and returns column `column` of its first row.
        static func value(_ server: TestServer, statement: PlannedStatement, userID: String, column: Int) throws -> String? {
            let statement = statement.postgres
            return try server.app.pool.withConnection { connection in
                try connection.execute("BEGIN")
                defer { _ = try? connection.execute("ROLLBACK") }
                _ = try connection.query("SELECT set_config('ferry.user_id', $1, true)", [userID])
                return try connection.query(statement.sql, statement.params).rows[0][column]
            }
        }

        /// Explains `statement` as `userID` on one of Ferry's own pool
        /// connections (its session settings included), after one warming run.
        static func explain(_ server: TestServer, statement: PlannedStatement, userID: String) throws -> ExecutedPlan {
            let statement = statement.postgres
            return try server.app.pool.withConnection { connection in
                try connection.execute("BEGIN")
                defer { _ = try? connection.execute("ROLLBACK") }
                _ = try connection.query("SELECT set_config('ferry.user_id', $1, true)", [userID])
                _ = try connection.query(statement.sql, statement.params)
                let json = try connection.query("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement.sql, statement.params).rows[0][0] ?? ""
                return try ExecutedPlan(json: json)
            }
        }
    }
}
