@testable import Ferry
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// What a poll costs. CI seeds 20,000 rows of another user;
    /// `FERRY_BENCH_ROWS=1000000` (bench/changes.sh) seeds a million and
    /// `FERRY_BENCH_CHANGES` sets how many changes the throughput part delivers.
    @Suite struct CostTests {
        static let rows = Int(ProcessInfo.processInfo.environment["FERRY_BENCH_ROWS"] ?? "") ?? 20_000
        static let changes = Int(ProcessInfo.processInfo.environment["FERRY_BENCH_CHANGES"] ?? "") ?? 2_000

        @Test func emptyPollIsAnIndexLookupAndPagesCostWhatTheyReturn() throws {
            let server = try TestServer()
            defer { server.stop() }
            let other = try server.user("bulk")
            // Another user's sets of 100 terms each, like many real users' data.
            let seedStart = Date()
            _ = try server.ownerQuery("INSERT INTO app.study_sets (creator_id, title) SELECT $1, 'bulk ' || i FROM generate_series(1, $2) i",
                                      [other.id, String(max(1, Self.rows / 100))])
            _ = try server.ownerQuery("""
                INSERT INTO app.terms (set_id, word, definition)
                SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i
                  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i WHERE s.creator_id = $1
                """, [other.id])
            _ = try server.ownerQuery("ANALYZE app.terms, app.study_sets")
            print("cost: seeded \(Self.rows) rows in \(String(format: "%.1f", Date().timeIntervalSince(seedStart))) s")

            let reader = try server.user("reader")
            let set = try server.makeSet(for: reader.id)
            let feed = FeedFollower(server: server, token: reader.token)
            try feed.catchUp(pastXID: try server.maxXID(), limit: 5_000, timeout: 300)
            let cursor = try #require(feed.position)

            // The empty poll's plan: index probes only, whatever the table size.
            let catalog = server.app.schema.catalog
            let request = ChangesRequest(since: cursor, limit: 500, resources: catalog.names.sorted(by: ChangeOrder.precedes))
            let plan = ChangesPlan(request: request, catalog: catalog, scopes: try scopes(server))
            let check = try explain(server, statement: plan.activityStatement, userID: reader.id)
            #expect(!check.text.contains("Seq Scan on terms"), "\(check.text)")
            #expect(check.text.contains("Index"))
            print("cost: empty poll (activity check) over \(Self.rows) rows: planning \(check.planningMs) ms, execution \(check.executionMs) ms")
            // The full page statement, had it run at that cursor: index scans too.
            let full = try explain(server, statement: plan.statement, userID: reader.id)
            #expect(!full.text.contains("Seq Scan on terms"), "\(full.text)")
            print("cost: full page statement at the frontier: planning \(full.planningMs) ms, execution \(full.executionMs) ms")
            if ProcessInfo.processInfo.environment["FERRY_BENCH_ROWS"] != nil { print(check.text) }

            // Server-side time of the empty poll over HTTP, many times.
            let auth = ("Authorization", "Bearer \(reader.token)")
            let token = try #require(feed.cursor)
            let client = server.client()
            let n = 300
            let pollStart = Date()
            for _ in 0..<n {
                let r = try client.request("GET", "/v1/changes?since=\(token)", headers: [auth, ("If-None-Match", "\"\(token)\"")])
                #expect(r.status == 304)
            }
            let perPoll = Date().timeIntervalSince(pollStart) / Double(n) * 1000
            print("cost: empty poll (304) round trip over HTTP, sequential: \(String(format: "%.2f", perPoll)) ms")

            // Throughput: deliver `changes` rows written after the cursor.
            let batches = 10
            for _ in 0..<batches { _ = try server.makeTerms(in: set, count: Self.changes / batches) }
            let xid = try server.maxXID()
            // Wait for the frontier first (the cluster's other writers may hold
            // it), so that the timing below is the feed's own work.
            let frontierDeadline = Date().addingTimeInterval(120)
            while UInt64(try server.ownerQuery("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").rows[0][0] ?? "0") ?? 0 <= xid,
                  Date() < frontierDeadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
            let start = Date()
            let before = feed.polls
            try feed.catchUp(pastXID: xid, limit: 5_000, timeout: 300)
            let seconds = Date().timeIntervalSince(start)
            #expect(feed.rows(of: "terms").count == Self.changes)
            print("cost: delivered \(Self.changes) changes out of \(Self.rows + Self.changes) rows in \(feed.polls - before) polls, "
                  + "\(String(format: "%.3f", seconds)) s = \(Int(Double(Self.changes) / seconds)) rows/s")
        }

        func scopes(_ server: TestServer) throws -> [AccessScope] {
            let connection = try PostgresConnection(url: server.database.appURL)
            defer { connection.close() }
            return try AccessScope.load(schema: "app", catalog: server.app.schema.catalog, connection: connection)
        }

        func explain(_ server: TestServer, statement: PostgresStatement, userID: String) throws -> (text: String, planningMs: Double, executionMs: Double) {
            let connection = try PostgresConnection(url: server.database.appURL)
            defer { connection.close() }
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            _ = try connection.query("SELECT set_config('ferry.user_id', $1, true)", [userID])
            // Warm the caches the way a serving connection is warm.
            _ = try connection.query(statement.sql, statement.params)
            let rows = try connection.query("EXPLAIN (ANALYZE, BUFFERS) " + statement.sql, statement.params).rows
            let text = rows.compactMap { $0[0] }.joined(separator: "\n")
            let number = { (label: String) -> Double in
                guard let line = rows.compactMap({ $0[0] }).first(where: { $0.hasPrefix(label) }) else { return -1 }
                return Double(line.dropFirst(label.count).split(separator: " ").first ?? "") ?? -1
            }
            return (text, number("Planning Time: "), number("Execution Time: "))
        }
    }
}
