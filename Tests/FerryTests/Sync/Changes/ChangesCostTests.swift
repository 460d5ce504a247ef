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
            for (name, s, l) in [
                ("page with grants and revocations", small.page, large.page),
                ("empty poll (activity check)", small.activity, large.activity),
                ("page at the frontier", small.frontierPage, large.frontierPage),
                ("poll after another user changed every row", small.othersActivity, large.othersActivity),
                (
                    "poll after another user changed every row the reader may not see",
                    small.invisibleActivity, large.invisibleActivity
                ),
            ] {
                print(
                    "cost: \(name): \(s.buffers) buffers at \(Self.sizes[0]) rows, \(l.buffers) at \(Self.sizes[1]); "
                        + "execution \(s.executionMs) / \(l.executionMs) ms, planning \(s.planningMs) / \(l.planningMs) ms")
                if ProcessInfo.processInfo.environment["FERRY_COST_PLANS"] != nil { print(s.text); print(l.text) }
                // terms is the table that grows; at the larger size the sets
                // outgrow the few pages that any planner rightly reads whole.
                let smallScans = s.executedSeqScans(of: ["terms"]), largeScans = l.executedSeqScans(of: Self.grownTables)
                #expect(smallScans.isEmpty, "\(name): executed sequential scans of \(smallScans)\n\(s.text)")
                #expect(largeScans.isEmpty, "\(name): executed sequential scans of \(largeScans)\n\(l.text)")
                // Per returned row, an index probe may descend one more level in a
                // ten times larger tree (3 buffers become 4); a scan of the table
                // reads about ten times more.
                #expect(
                    l.buffers <= 2 * s.buffers + 16,
                    "\(name): \(s.buffers) buffers at \(Self.sizes[0]) rows, \(l.buffers) at \(Self.sizes[1])\n\(l.text)")
            }
            // The page from before the access changes delivers what they brought
            // (each set's 100 terms, granted or revoked), the same at both sizes.
            #expect(small.pageRows == large.pageRows)
            #expect(small.pageRows >= (Self.grants + Self.revocations) * 100)
            // Of the other user's rewrite the reader sees what is in the sets still
            // shared with them, and nothing else: the same at both sizes.
            #expect(small.othersPageRows == large.othersPageRows)
            #expect(small.othersPageRows == Self.grants * 100 + 1)
            // That page reads each row it returns, and its scope row for the
            // policy (a few buffers each), never the other user's rewrite
            // (every row of the table, after the cursor): the feed reads
            // through the reader's sets (core 0021). At the smaller size the
            // planner may hash the policy's scope table instead, so the page is
            // judged by what it returns, not against the smaller size.
            for (size, plan) in [(Self.sizes[0], small.othersPage), (Self.sizes[1], large.othersPage)] {
                print(
                    "cost: page after another user changed every row: \(plan.buffers) buffers at \(size) rows, "
                        + "\(small.othersPageRows) entries; execution \(plan.executionMs) ms")
                let scans = plan.executedSeqScans(of: size == Self.sizes[0] ? ["terms"] : Self.grownTables)
                #expect(scans.isEmpty, "page after the rewrite at \(size): executed sequential scans of \(scans)\n\(plan.text)")
                #expect(
                    plan.buffers <= 6 * small.othersPageRows + 64,
                    "page after the rewrite at \(size): \(plan.buffers) buffers for \(small.othersPageRows) entries\n\(plan.text)")
            }
            // The other user's own first page from the start reads through their
            // sets: two index entries per set for the page's bound (about 11
            // buffers a set: the entries, their heap rows while the visibility
            // map is unset, their set's policy check), then each set's entries
            // up to it (about 4), never each set's rows in full (100 each, over
            // 110 buffers a set), which another index on the set column once
            // made PostgreSQL do.
            for (size, plan) in [(Self.sizes[0], small.ownerFirstPage), (Self.sizes[1], large.ownerFirstPage)] {
                let sets = size / 100
                print("cost: the owner of \(sets) sets' first page from the start: \(plan.buffers) buffers; execution \(plan.executionMs) ms")
                let scans = plan.executedSeqScans(of: ["terms"])
                #expect(scans.isEmpty, "the owner's first page at \(size): executed sequential scans of \(scans)\n\(plan.text)")
                #expect(
                    plan.buffers <= 20 * sets + 6 * 100 + 64,
                    "the owner's first page at \(size): \(plan.buffers) buffers for \(sets) sets\n\(plan.text)")
            }
            // As served, a caller who may read most of the sets walks the terms
            // (ReadThrough.walkGate), meeting mostly their own rows: the page
            // costs what it returns, and their readable sets counted once.
            for (size, plan) in [(Self.sizes[0], small.ownerFirstPageWalked), (Self.sizes[1], large.ownerFirstPageWalked)] {
                let sets = size / 100
                print(
                    "cost: the owner of \(sets) sets' first page from the start, walked: \(plan.buffers) buffers; "
                        + "execution \(plan.executionMs) ms")
                #expect(
                    plan.buffers <= sets / 2 + 6 * 100 + 64,
                    "the owner's walked first page at \(size): \(plan.buffers) buffers for \(sets) sets\n\(plan.text)")
            }
        }

        /// A waiter's first check reads the user's scope rows, to know which
        /// commits wake it (``FeedCheck/scopeRows(_:readThrough:)``). Other
        /// users' public sets must not cost it: under Row Level Security alone
        /// the policy's public arm made PostgreSQL test every set, 0.47 s a
        /// check at 100,000 public sets (bench/public-sets, `POST
        /// /v1/changes/wait`). Ten times the public sets: the same few buffers.
        @Test func aWaitersScopeRowsCostItsOwnSetsNotOtherUsersPublicOnes() throws {
            var plans: [(sets: Int, plan: ExecutedPlan)] = []
            for sets in [Self.sizes[0] / 10, Self.sizes[1] / 10] {
                let server = try TestServer()
                defer { server.stop() }
                let publisher = try server.user("publisher")
                _ = try server.ownerQuery(
                    "INSERT INTO app.study_sets (creator_id, title, is_public) SELECT $1, 'public ' || i, true FROM generate_series(1, $2) i",
                    [publisher.id, String(sets)])
                _ = try server.ownerQuery("ANALYZE app.study_sets")
                let reader = try server.user("reader")
                let own = try server.makeSet(for: reader.id)
                let catalog = server.app.schema.catalog
                let paths = try ReadPath.load(schema: "app", catalog: catalog, database: server.app.database)
                let statement = FeedCheck.scopeRows(
                    try #require(catalog["study_sets"]), readThrough: ReadThrough(catalog: catalog, readPaths: paths))
                // Their own set, as its owner; never a public set (the default stream holds none).
                #expect(try Self.value(server, statement: statement, userID: reader.id, column: "id") == own)
                #expect(try Self.value(server, statement: statement, userID: reader.id, column: "owned") == "t")
                plans.append((sets, try Self.explain(server, statement: statement, userID: reader.id)))
            }
            for (sets, plan) in plans {
                print("cost: a waiter's scope rows beside \(sets) public sets: \(plan.buffers) buffers; execution \(plan.executionMs) ms")
                let scans = plan.executedSeqScans(of: ["study_sets"])
                #expect(scans.isEmpty, "scope rows beside \(sets) public sets: executed sequential scans of \(scans)\n\(plan.text)")
            }
            #expect(
                plans[1].plan.buffers <= 2 * plans[0].plan.buffers + 16,
                "scope rows: \(plans[0].plan.buffers) buffers beside \(plans[0].sets) public sets, \(plans[1].plan.buffers) beside \(plans[1].sets)")
        }

        static let grants = 4
        static let revocations = 2

        struct Measurement {
            let page: ExecutedPlan
            let pageRows: Int
            let activity: ExecutedPlan
            let frontierPage: ExecutedPlan
            /// After the other user rewrote every one of their rows.
            let othersActivity: ExecutedPlan
            let othersPage: ExecutedPlan
            let othersPageRows: Int
            /// After the other user rewrote every row the reader may not see.
            let invisibleActivity: ExecutedPlan
            /// The other user's own first page of 100 from the start, through the paths.
            let ownerFirstPage: ExecutedPlan
            /// The same as served: the other user may read nearly every set, so it walks.
            let ownerFirstPageWalked: ExecutedPlan
        }

        /// Seeds `rows` terms of another user (sets of 100), gives the reader
        /// access to `grants` of those sets and takes `revocations` away, and
        /// explains the reader's page from before those changes, the empty poll
        /// after them, and the full page statement at that frontier; then the
        /// other user rewrites every row, and it explains the reader's poll and
        /// page after that, which hold only the sets still shared with them.
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
            let sets = try server.ownerQuery(
                "SELECT id FROM app.study_sets WHERE creator_id = $1 ORDER BY title LIMIT $2",
                [other.id, String(grants + revocations)]
            ).rows.compactMap { $0[0] }
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
            let paths = try ReadPath.load(schema: "app", catalog: catalog, database: server.app.database)
            let resources = catalog.names.sorted(by: ChangeOrder.precedes)
            let plan = { (since: ChangeCursor, limit: Int) in
                ChangesPlan(
                    request: ChangesRequest(since: since, limit: limit, resources: resources),
                    catalog: catalog, scopes: scopes, readPaths: paths)
            }
            let start = ChangesRequest(since: .start, limit: 100, resources: resources)
            let ownerFirstPage = try explain(
                server,
                statement: ChangesPlan(
                    request: start, catalog: catalog, scopes: scopes, readPaths: paths, walks: .never
                ).statement,
                userID: other.id)
            let ownerFirstPageWalked = try explain(server, statement: plan(.start, 100).statement, userID: other.id)
            let pagePlan = plan(before, 1_000)
            let page = try explain(server, statement: pagePlan.statement, userID: reader.id)
            // Column 4 counts the page's entries (at most its limit + 1).
            let pageRows = Int(try value(server, statement: pagePlan.statement, userID: reader.id, column: "count") ?? "") ?? -1

            try feed.catchUp(pastXID: try server.maxXID(), limit: 5_000, timeout: 300)
            let frontier = try #require(feed.position)
            let quiet = plan(frontier, 500)
            let activity = try explain(server, statement: quiet.activityStatement, userID: reader.id)
            let frontierPage = try explain(server, statement: quiet.statement, userID: reader.id)

            // The other user rewrites all their rows, and one of a set still shared.
            let otherSets = try server.ownerQuery("SELECT id FROM app.study_sets WHERE creator_id = $1 ORDER BY id", [other.id])
                .rows.compactMap { $0[0] }
            try Self.rewriteTerms(server, sets: otherSets)
            _ = try server.ownerQuery("UPDATE app.study_sets SET title = title || '.' WHERE id = $1", [sets[0]])
            let rewrite = try server.maxXID()
            try waitUntil("every transaction older than xid \(rewrite) to end", within: 120) {
                UInt64(try server.ownerQuery("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").rows[0][0] ?? "0") ?? 0 > rewrite
            }
            let after = plan(frontier, 5_000)
            let othersActivity = try explain(server, statement: after.activityStatement, userID: reader.id)
            let othersPage = try explain(server, statement: after.statement, userID: reader.id)
            let othersPageRows = Int(try value(server, statement: after.statement, userID: reader.id, column: "count") ?? "") ?? -1

            // Then every row the reader may not see: their poll finds nothing.
            try feed.catchUp(pastXID: try server.maxXID(), limit: 5_000, timeout: 300)
            let caughtUp = try #require(feed.position)
            try Self.rewriteTerms(server, sets: otherSets.filter { !sets.prefix(grants).contains($0) })
            let hidden = try server.maxXID()
            try waitUntil("every transaction older than xid \(hidden) to end", within: 120) {
                UInt64(try server.ownerQuery("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").rows[0][0] ?? "0") ?? 0 > hidden
            }
            let invisible = plan(caughtUp, 500).activityStatement
            #expect(
                try value(server, statement: invisible, userID: reader.id, column: "found") == "f",
                "the reader's poll found something in another user's private rows")
            return Measurement(
                page: page, pageRows: pageRows, activity: activity, frontierPage: frontierPage,
                othersActivity: othersActivity, othersPage: othersPage, othersPageRows: othersPageRows,
                invisibleActivity: try explain(server, statement: invisible, userID: reader.id),
                ownerFirstPage: ownerFirstPage, ownerFirstPageWalked: ownerFirstPageWalked)
        }

        /// Rewrites every term of `sets`, 100 sets (10,000 terms) a transaction:
        /// one statement over all of them would hold the feed's frontier back,
        /// cluster-wide, for as long as it ran, and every other suite's feed
        /// test waits for the frontier (a clean-clone run saw one wait past 240 s).
        static func rewriteTerms(_ server: TestServer, sets: [String]) throws {
            for start in stride(from: 0, to: sets.count, by: 100) {
                let chunk = sets[start..<min(start + 100, sets.count)]
                _ = try server.ownerQuery(
                    "UPDATE app.terms SET definition = definition || '.' WHERE set_id = ANY ($1::uuid[])",
                    ["{" + chunk.joined(separator: ",") + "}"])
            }
        }

        /// Another user's `rows` terms, in sets of 100: the table that grows.
        static func seedOtherUser(_ server: TestServer, rows: Int) throws -> (id: String, token: String) {
            let other = try server.user("bulk")
            _ = try server.ownerQuery(
                "INSERT INTO app.study_sets (creator_id, title) SELECT $1, 'bulk ' || i FROM generate_series(1, $2) i",
                [other.id, String(max(1, rows / 100))])
            _ = try server.ownerQuery(
                """
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

        /// Runs `statement` as `userID` and returns its first row's column called `column`.
        static func value(_ server: TestServer, statement: PlannedStatement, userID: String, column: String) throws -> String? {
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
