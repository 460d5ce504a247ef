import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// What holds the feed's frontier back, and what no longer does (issue 47;
    /// docs/changes-feed.md, "Order from commit visibility"): a device waits on
    /// a long poll while another transaction runs, and its own write must reach
    /// it while that transaction still runs, unless the transaction may still
    /// commit rows of this database.
    @Suite struct FrontierHoldTests {
        /// A caught-up alice with a set, waiting on a long poll.
        struct Waiting {
            let server: TestServer
            let alice: (id: String, token: String)
            let set: String
            let poll: PendingRequest
        }

        func waiting(_ server: TestServer) throws -> Waiting {
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            return Waiting(server: server, alice: (alice.id, alice.token), set: set, poll: poll)
        }

        /// A session of another database of the cluster, idle in a transaction
        /// after a write (so it holds an xid below every later one), never holds
        /// the feed back. Before issue 47 the waiter's own write stayed at or
        /// above the frontier until that session ended (here: never, the poll
        /// ran to its 60 s deadline and this test failed on the 20 s wait).
        @Test func aWriteIdleInTransactionInAnotherDatabaseDoesNotHoldTheFeed() throws {
            let server = try TestServer()
            defer { server.stop() }
            let other = try PostgresConnection(url: try TestEnvironment.ownerURL())
            defer { other.close() }
            #expect(try other.query("SELECT current_database() <> $1", [server.database.name]).first?.bool(0) == true)
            try other.execute("BEGIN")
            try other.execute("CREATE TEMP TABLE elsewhere (a int)")
            let held = try #require(try other.query("SELECT pg_current_xact_id()::text").first?.uint64(0))
            let w = try waiting(server)
            let term = try server.createTerm(in: w.set, word: "hola", token: w.alice.token)
            let response = try w.poll.response(within: 20)
            #expect(LongPollTests.ids(response, "terms") == [term])
            // The other database's transaction still runs, older than the write.
            let running = try server.ownerQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_xid = $1::xid",
                [String(held)])
            #expect(try running.first?.int64(0) == 1)
            // A plain poll sees it too, and the cursor passed the held xid.
            let cursor = try #require(ChangeCursor(token: response.object["cursor"] as? String ?? ""))
            #expect(cursor.afterXID > held)
            try other.execute("ROLLBACK")
        }

        /// `pg_dump` running throughout (stopped mid-dump on its full output
        /// pipe, which nobody reads yet, inside its repeatable-read transaction)
        /// holds no xid, so it never held the feed. (A table lock cannot gate it:
        /// taking ACCESS EXCLUSIVE gives the locker an xid.)
        @Test func pgDumpRunningThroughoutDoesNotHoldTheFeed() throws {
            let server = try TestServer()
            defer { server.stop() }
            let output = Pipe()
            let dump = Process()
            dump.executableURL = URL(fileURLWithPath: try TestEnvironment.postgresBin() + "/pg_dump")
            dump.arguments = ["--dbname", server.database.ownerURL]
            dump.standardOutput = output
            dump.standardError = FileHandle.nullDevice
            try dump.run()
            defer { if dump.isRunning { dump.terminate() } }
            let inDump = """
                SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND application_name = 'pg_dump' AND xact_start IS NOT NULL
                """
            try waitUntil("pg_dump to be in its transaction", within: 60) { try server.ownerQuery(inDump).first?.int64(0) == 1 }
            let w = try waiting(server)
            let term = try server.createTerm(in: w.set, word: "hola", token: w.alice.token)
            let response = try w.poll.response(within: 20)
            #expect(LongPollTests.ids(response, "terms") == [term])
            // Still in the same dump: its output (the schema alone is well over a pipe's 64 KiB) waits unread.
            #expect(dump.isRunning)
            #expect(try server.ownerQuery(inDump).first?.int64(0) == 1)
            let dumped = output.fileHandleForReading.readDataToEndOfFile()
            dump.waitUntilExit()
            #expect(dump.terminationStatus == 0)
            #expect(dumped.count > 65536)
        }

        /// Sessions of this database that have written no synced row never
        /// hold the feed (core 0032): one idle in a transaction after a write to
        /// a table that is not synced, one in the middle of a migration of such
        /// a table, and one that locked a synced row `FOR UPDATE` (a read that
        /// takes an xid). Before 0032 each held the waiter's own write back
        /// until it ended (here: never; the poll ran to its deadline and this
        /// test failed on the 20 s wait; Tests/SQL/19_feed_stamps.sh shows the
        /// same at the SQL level, and fails without 0032).
        @Test func transactionsThatWroteNoSyncedRowDoNotHoldTheFeed() throws {
            let server = try TestServer()
            defer { server.stop() }
            _ = try server.ownerQuery("CREATE TABLE public.unsynced (a int)")
            _ = try server.ownerQuery("CREATE TABLE public.migrated (a int)")
            let bob = try server.user("bob")
            let locked = try server.makeSet(for: bob.id)
            var sessions: [PostgresConnection] = []
            defer { for s in sessions { try? s.execute("ROLLBACK"); s.close() } }
            for statement in [
                "INSERT INTO public.unsynced VALUES (1)",
                "ALTER TABLE public.migrated ADD COLUMN b int",
                "SELECT 1 FROM app.study_sets WHERE id = '\(locked)' FOR UPDATE",
            ] {
                let session = try server.database.connect()
                sessions.append(session)
                try session.execute("BEGIN")
                _ = try session.query(statement)
            }
            let idle = """
                SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND backend_xid IS NOT NULL AND state LIKE 'idle in transaction%'
                """
            #expect(try server.ownerQuery(idle).first?.int64(0) == 3)
            let w = try waiting(server)
            let term = try server.createTerm(in: w.set, word: "hola", token: w.alice.token)
            let response = try w.poll.response(within: 20)
            #expect(LongPollTests.ids(response, "terms") == [term])
            // All three still run, older than the write the waiter received.
            #expect(try server.ownerQuery(idle).first?.int64(0) == 3)
        }

        /// The promise where holding is needed: a transaction of this database
        /// takes its xid with a write to a table that is not synced and sleeps.
        /// Meanwhile the frontier passes it (the waiter's newer write arrives at
        /// once), and only then does it write a synced row: stamped at or above
        /// every frontier computed before (core 0032), so the device following
        /// its cursor receives it once it commits, and nothing is missed.
        @Test func aTransactionThatSleepsThenWritesASyncedRowIsStillDelivered() throws {
            let server = try TestServer()
            defer { server.stop() }
            let (alice, set, old) = try server.unsyncedTableAndAlicesTerm()
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let slow = try server.database.connect()
            defer { slow.close() }
            try slow.execute("BEGIN")
            try slow.execute("INSERT INTO public.unsynced VALUES (1)")
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            let newer = try server.createTerm(in: set, word: "newer", token: alice.token)
            let answer = try poll.response(within: 20)
            var received = LongPollTests.ids(answer, "terms")
            #expect(received == [newer])
            _ = try slow.query("UPDATE app.terms SET word = 'late' WHERE id = $1", [old])
            try slow.execute("COMMIT")
            var words = Self.words(answer)
            var cursor = answer.object["cursor"] as? String ?? ""
            try waitUntil("the late row after the cursor that passed its transaction, in its committed state", within: 30) {
                if received.contains(old), words[old] == "late" { return true }
                let next = try server.client().request(
                    "GET", "/v1/changes?since=\(cursor)",
                    headers: [("Authorization", "Bearer \(alice.token)")])
                received.formUnion(LongPollTests.ids(next, "terms"))
                words.merge(Self.words(next)) { $1 }
                cursor = next.object["cursor"] as? String ?? cursor
                return false
            }
        }

        /// Operators see it (core 0024): a session of this database idle in a
        /// transaction after a synced write holds the feed; `/metrics` names its
        /// kind and how long, and past `live.max_feed_hold_seconds` `/readyz`
        /// says so (still 200). Nothing holding: zero, and no `feed` member.
        @Test func metricsAndReadinessNameWhatHoldsTheFeed() throws {
            let server = try TestServer { $0.live.maxFeedHoldSeconds = 0.5 }
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let client = server.client()
            let quiet = try client.request("GET", "/readyz")
            #expect(quiet.status == 200)
            #expect(quiet.object["feed"] == nil)
            let idle = try server.database.connect()
            defer { idle.close() }
            try idle.execute("BEGIN")
            _ = try idle.query("UPDATE app.study_sets SET title = 'held' WHERE id = $1", [set])
            // A newer commit, so that the frontier is below the snapshot's xmax.
            _ = try server.makeSet(for: alice.id)
            try waitUntil("the hold to pass its limit", within: 30) {
                (try client.request("GET", "/readyz").object["feed"] as? [String: Any])?["held"] as? String == "over_limit"
            }
            let ready = try client.request("GET", "/readyz")
            #expect(ready.status == 200)
            let feed = try #require(ready.object["feed"] as? [String: Any])
            #expect(feed["held_by"] as? String == "idle_in_transaction")
            let metrics = try client.request("GET", "/metrics").text
            #expect(metrics.contains("ferry_feed_hold_over_limit 1"))
            let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("ferry_feed_held_seconds{kind=\"idle_in_transaction\"}") })
            #expect((Double(line.split(separator: " ").last ?? "") ?? 0) >= 0.5)
            try idle.execute("ROLLBACK")
            try waitUntil("the hold to end", within: 30) { try client.request("GET", "/readyz").object["feed"] == nil }
            #expect(try client.request("GET", "/metrics").text.contains("ferry_feed_hold_over_limit 0"))
        }

        static func words(_ response: TestHTTPClient.Response) -> [String: String] {
            var out: [String: String] = [:]
            for change in response.object["changes"] as? [[String: Any]] ?? [] {
                guard let data = change["data"] as? [String: Any], let id = data["id"] as? String else { continue }
                out[id] = data["word"] as? String
            }
            return out
        }
    }
}

extension TestServer {
    /// The set-up of the slow-writer cases (``ChangesSuites/FrontierHoldTests``,
    /// ``ChangesSuites/FrontierFallbackTests``): a table the feed does not sync,
    /// for a transaction to take its xid with, and Alice's set with one term.
    func unsyncedTableAndAlicesTerm() throws -> (alice: (id: String, token: String), set: String, old: String) {
        _ = try ownerQuery("CREATE TABLE public.unsynced (a int)")
        let alice = try user("alice")
        let set = try makeSet(for: alice.id)
        return (alice, set, try makeTerms(in: set, count: 1)[0])
    }
}
