import Ferry
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// The hard part: commit order differs from start order, transactions run
    /// long or roll back, and a client following the feed still ends with
    /// every committed row in its final revision and nothing else.
    ///
    /// CI: 20 runs of ~1.2 s of writing each. `FERRY_SOAK=1` (bench/soak.sh):
    /// 200 runs of 5 s with transactions held up to 3 s.
    @Suite struct RaceTests {
        static let soak = ProcessInfo.processInfo.environment["FERRY_SOAK"] == "1"

        @Test func followingTheFeedNeverMissesACommittedChange() throws {
            let server = try TestServer()
            defer { server.stop() }
            let runs = Self.soak ? 200 : 20
            for run in 0..<runs {
                try raceOnce(server, run: run, writeSeconds: Self.soak ? 5 : 1.2, maxHoldMs: Self.soak ? 3_000 : 600)
            }
        }

        func raceOnce(_ server: TestServer, run: Int, writeSeconds: Double, maxHoldMs: Int) throws {
            let user = try server.user("racer\(run)")
            let set = try server.makeSet(for: user.id)
            let ledger = RaceLedger()
            let end = Date().addingTimeInterval(writeSeconds)
            let writers = (0..<8).map { _ in
                RaceWriter(url: server.database.appURL, userID: user.id, setID: set, ledger: ledger, maxHoldMs: maxHoldMs)
            }
            let group = onThreads(writers.map { writer in { writer.run(until: end) } })
            let feed = FeedFollower(server: server, token: user.token)
            while group.wait(timeout: .now()) == .timedOut {
                try feed.poll(limit: [3, 17, 100].randomElement()!)
                Thread.sleep(forTimeInterval: 0.005)
            }
            try feed.catchUp(pastXID: try server.maxXID(), limit: 50)
            try expectFeedMatchesDatabase(server, feed: feed, set: set, ledger: ledger, context: "run \(run)")
        }

        /// One writer holds its transaction open for 30 s while others commit.
        /// The frontier waits for it; nothing written before or after is lost,
        /// and its own rows (older xid, later commit) arrive too.
        @Test func oneTransactionHeldOpenFor30Seconds() throws {
            let server = try TestServer()
            defer { server.stop() }
            let user = try server.user("patient")
            let set = try server.makeSet(for: user.id)
            let early = try server.makeTerms(in: set, count: 5)
            let feed = FeedFollower(server: server, token: user.token)
            try feed.catchUp(pastXID: try server.maxXID())

            let held = try PostgresConnection(url: server.database.appURL)
            defer { held.close() }
            _ = try held.query("SELECT set_config('ferry.user_id', $1, false)", [user.id])
            try held.execute("BEGIN")
            let heldXID = UInt64(try held.query("SELECT pg_current_xact_id()::text").rows[0][0] ?? "0") ?? 0
            let heldID = UUID().uuidString.lowercased()
            _ = try held.query("INSERT INTO app.terms (id, set_id, word) VALUES ($1, $2, 'held')", [heldID, set])
            _ = try held.query("UPDATE app.terms SET word = 'held-update' WHERE id = $1", [early[0]])
            let heldSince = Date()

            let ledger = RaceLedger()
            ledger.committed(Array(early.dropFirst()))
            let end = Date().addingTimeInterval(4)
            let writers = (0..<4).map { _ in
                RaceWriter(url: server.database.appURL, userID: user.id, setID: set, ledger: ledger, maxHoldMs: 300)
            }
            let group = onThreads(writers.map { writer in { writer.run(until: end) } })
            // While it is open, the cursor never passes it and its rows never show.
            while Date().timeIntervalSince(heldSince) < 30 {
                try feed.poll(limit: 20)
                let position = try #require(feed.position)
                #expect(position.afterXID < heldXID, "the cursor passed a running transaction")
                #expect(feed.rows["terms/\(heldID)"] == nil)
                Thread.sleep(forTimeInterval: 0.05)
            }
            group.wait()
            try held.execute("COMMIT")
            try feed.catchUp(pastXID: try server.maxXID(), limit: 50)
            #expect(feed.rows["terms/\(heldID)"]?["word"] as? String == "held")
            // Later transactions committed first, with larger xids: a "highest
            // seen" cursor would have skipped the held rows.
            let later = try server.ownerQuery("SELECT count(*) FROM app.terms WHERE set_id = $1 AND _ferry_xid > $2::xid8",
                                              [set, String(heldXID)]).rows[0][0]
            #expect((Int(later ?? "0") ?? 0) > 0)
            try expectFeedMatchesDatabase(server, feed: feed, set: set, ledger: ledger, context: "held 30 s")
        }

        func expectFeedMatchesDatabase(_ server: TestServer, feed: FeedFollower, set: String, ledger: RaceLedger,
                                       context: String) throws {
            let truth = try server.ownerQuery(
                "SELECT id::text, revision::text, word, is_deleted::text FROM app.terms WHERE set_id = $1", [set]).rows
            let got = feed.rows(of: "terms")
            var missing = 0, stale = 0
            for row in truth {
                let id = row[0] ?? ""
                guard let mine = got[id] else { missing += 1; continue }
                let deleted = row[3] == "true"
                if mine["revision"] as? Int != Int(row[1] ?? "") || (mine["is_deleted"] as? Bool ?? false) != deleted
                    || (!deleted && mine["word"] as? String != row[2]) {
                    stale += 1
                }
            }
            let extra = Set(got.keys).subtracting(truth.compactMap { $0[0] })
            let fromRollbacks = extra.intersection(ledger.rolledBackIDs)
            let counts = ledger.counts
            #expect(missing == 0, "\(context): \(missing) committed rows never arrived")
            #expect(stale == 0, "\(context): \(stale) rows not in their final revision")
            #expect(extra.isEmpty, "\(context): \(extra.count) rows that do not exist (\(fromRollbacks.count) from rolled-back transactions)")
            #expect(counts.commits > 0 && counts.rollbacks > 0, "\(context): the race needs commits and rollbacks (\(counts))")
        }
    }
}
