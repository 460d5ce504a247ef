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
    /// CI: 20 runs of ~1.2 s of writing each. `FERRY_SOAK=1` (bench/feed/changes.sh
    /// soak): 200 runs of 5 s with transactions held up to 3 s.
    ///
    /// The work blocks for a long time, so it runs on its own thread (not on
    /// one of the few cooperative threads other tests' tasks need) and hands
    /// back what went wrong; the expectations are checked in the test's task.
    @Suite struct RaceTests {
        static let soak = ProcessInfo.processInfo.environment["FERRY_SOAK"] == "1"

        @Test func followingTheFeedNeverMissesACommittedChange() async throws {
            let problems = try await onThread { Result { try Self.races() } }.get()
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }

        static func races() throws -> [String] {
            let server = try TestServer()
            defer { server.stop() }
            var problems: [String] = []
            for run in 0..<(soak ? 200 : 20) {
                problems += try raceOnce(server, run: run, writeSeconds: soak ? 5 : 1.2, maxHoldMs: soak ? 3_000 : 600)
            }
            return problems
        }

        static func raceOnce(_ server: TestServer, run: Int, writeSeconds: Double, maxHoldMs: Int) throws -> [String] {
            let user = try server.user("racer\(run)")
            let set = try server.makeSet(for: user.id)
            let ledger = RaceLedger()
            let writers = (0..<8).map { _ in
                RaceWriter(url: server.database.appURL, userID: user.id, setID: set, ledger: ledger, maxHoldMs: maxHoldMs)
            }
            let gate = StartGate(writers: writers.count)
            let group = onThreads(writers.map { writer in { writer.run(gate) } })
            gate.start(seconds: writeSeconds)
            let feed = FeedFollower(server: server, token: user.token)
            while group.wait(timeout: .now()) == .timedOut {
                try feed.poll(limit: [3, 17, 100].randomElement()!)
                // A real sleep: it paces the polls that race the writers; the writers' end ends the loop.
                Thread.sleep(forTimeInterval: 0.005)
            }
            try feed.catchUp(pastXID: try server.maxXID(), limit: 50)
            return try mismatches(server, feed: feed, set: set, ledger: ledger, context: "run \(run)")
        }

        /// One writer holds its transaction open for 30 s while others commit.
        /// The frontier waits for it; nothing written before or after is lost,
        /// and its own rows (older xid, later commit) arrive too.
        @Test func oneTransactionHeldOpenFor30Seconds() async throws {
            let problems = try await onThread { Result { try Self.heldFor30Seconds() } }.get()
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }

        static func heldFor30Seconds() throws -> [String] {
            var problems: [String] = []
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
            let writers = (0..<4).map { _ in
                RaceWriter(url: server.database.appURL, userID: user.id, setID: set, ledger: ledger, maxHoldMs: 300)
            }
            let gate = StartGate(writers: writers.count)
            let group = onThreads(writers.map { writer in { writer.run(gate) } })
            gate.start(seconds: 4)
            // While it is open, the cursor never passes it and its rows never show.
            while Date().timeIntervalSince(heldSince) < 30 {
                try feed.poll(limit: 20)
                if let position = feed.position, position.afterXID >= heldXID {
                    problems.append("the cursor passed a running transaction (\(position.afterXID) >= \(heldXID))")
                }
                if feed.rows["terms/\(heldID)"] != nil { problems.append("a row of an uncommitted transaction arrived") }
                // A real sleep: it paces the polls over the 30 s the transaction must stay open.
                Thread.sleep(forTimeInterval: 0.05)
            }
            group.wait()
            try held.execute("COMMIT")
            try feed.catchUp(pastXID: try server.maxXID(), limit: 50)
            if feed.rows["terms/\(heldID)"]?["word"] as? String != "held" { problems.append("the held transaction's row is missing") }
            // Later transactions committed first, with larger xids: a "highest
            // seen" cursor would have skipped the held rows.
            let later = try server.ownerQuery(
                "SELECT count(*) FROM app.terms WHERE set_id = $1 AND _ferry_xid > $2::xid8",
                [set, String(heldXID)]
            ).rows[0][0]
            if (Int(later ?? "0") ?? 0) == 0 { problems.append("no transaction committed after the held one started") }
            return problems + (try mismatches(server, feed: feed, set: set, ledger: ledger, context: "held 30 s"))
        }

        static func mismatches(
            _ server: TestServer, feed: FeedFollower, set: String, ledger: RaceLedger,
            context: String
        ) throws -> [String] {
            let truth = try server.ownerQuery(
                "SELECT id::text, revision::text, word, is_deleted::text FROM app.terms WHERE set_id = $1", [set]
            ).rows
            let got = feed.rows(of: "terms")
            var missing = 0, stale = 0
            for row in truth {
                let id = row[0] ?? ""
                guard let mine = got[id] else { missing += 1; continue }
                let deleted = row[3] == "true"
                if mine["revision"] as? Int != Int(row[1] ?? "") || (mine["is_deleted"] as? Bool ?? false) != deleted
                    || (!deleted && mine["word"] as? String != row[2])
                {
                    stale += 1
                }
            }
            let extra = Set(got.keys).subtracting(truth.compactMap { $0[0] })
            let fromRollbacks = extra.intersection(ledger.rolledBackIDs)
            let counts = ledger.counts
            var problems: [String] = []
            if missing > 0 { problems.append("\(context): \(missing) committed rows never arrived") }
            if stale > 0 { problems.append("\(context): \(stale) rows not in their final revision") }
            if !extra.isEmpty {
                problems.append("\(context): \(extra.count) rows that do not exist (\(fromRollbacks.count) from rolled-back transactions)")
            }
            if counts.commits == 0 || counts.rollbacks == 0 {
                problems.append("\(context): the race needs commits and rollbacks (\(counts))")
            }
            return problems
        }
    }
}
