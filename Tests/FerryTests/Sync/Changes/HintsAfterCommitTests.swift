import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// Waking devices costs Ferry's writers no NOTIFY (core 0028, issue 47
    /// item 4): a write through Ferry collects its hints in its transaction,
    /// and after the commit its instance wakes its own waiters and sends one
    /// batched NOTIFY for the others; a write made outside Ferry still
    /// notifies from its triggers the moment it commits.
    @Suite struct HintsAfterCommitTests {
        /// Payloads on `ferry_changes` until none has come for 0.5 s.
        static func drain(_ listener: PostgresConnection) throws -> [String] {
            var payloads: [String] = []
            while true {
                let received = try listener.notifications(waitingUpTo: 0.5)
                if received.isEmpty { return payloads }
                payloads += received.filter { $0.channel == "ferry_changes" }.map(\.payload)
            }
        }

        /// Alice with a set, caught up with the feed, and her long poll from its end on
        /// `port`, once `registered` has seen it wait there.
        static func alicesLongPoll(
            _ server: TestServer, port: Int, registered: () throws -> Void
        ) throws -> (alice: (id: String, token: String), set: String, poll: PendingRequest) {
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let poll = PendingRequest(port: port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try registered()
            return (alice, set, poll)
        }

        /// `other`'s one waiter is registered and asleep.
        static func waiting(_ other: TestFerryInstance) throws {
            try waitUntil("the waiter on the other instance", within: 30) {
                other.app.live.waiters == 1 && other.app.live.checksRunning == 0
            }
        }

        @Test func aWriteThroughFerryNotifiesOnlyAfterItsCommitFromItsInstance() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            // Named as an instance's listener: another instance listens, so the server sends.
            let listener = try server.database.connect(applicationName: "ferry-listen")
            defer { listener.close() }
            try listener.listen(["ferry_changes"])
            _ = try Self.drain(listener)
            let published = server.app.live.hintsPublished
            _ = try server.createTerm(in: set, word: "quiet", token: alice.token)
            let terms = try server.ownerQuery("SELECT 'app.terms'::regclass::oid::text").rows[0][0] ?? ""
            let sets = try server.ownerQuery("SELECT 'app.study_sets'::regclass::oid::text").rows[0][0] ?? ""
            var lines: Set<String> = []
            var payloads: [String] = []
            try waitUntil("the instance's NOTIFY of the write", within: 30) {
                payloads += try Self.drain(listener)
                lines = Set(
                    payloads.flatMap { $0.split(separator: "\n").dropFirst().map { String($0.split(separator: " ", maxSplits: 1).last ?? "") } })
                return lines.contains("\(terms) u \(alice.id)")
            }
            // No payload of the write's own transaction: every one is the instance's batch.
            #expect(!payloads.isEmpty)
            #expect(payloads.allSatisfy { $0.hasPrefix("@") }, "\(payloads)")
            #expect(lines == ["\(terms) u \(alice.id)", "\(terms) s \(sets) \(set)"])
            #expect(server.app.live.hintsPublished == published + 2)
        }

        /// Nobody else listens: a lone instance wakes its own waiters and sends no NOTIFY.
        @Test func aLoneInstanceSendsNoNotify() throws {
            let server = try TestServer()
            defer { server.stop() }
            let (alice, set, poll) = try Self.alicesLongPoll(server, port: server.port) { try server.waitForWaiters(1) }
            try waitUntil("the instance's listener", within: 30) { server.app.live.isListening }
            let published = server.app.live.hintsPublished
            let term = try server.createTerm(in: set, word: "alone", token: alice.token)
            let response = try poll.response()
            #expect(LongPollTests.ids(response, "terms") == [term])
            #expect(server.app.live.hintsPublished > published)
            // The sender asked, found no other listener, and dropped the hints instead of sending them.
            try waitUntil("the hints dropped", within: 30) { server.app.live.hintsUnsentAlone >= server.app.live.hintsPublished - published }
            #expect(server.app.live.hintPeers == 0)
            #expect(server.app.live.hintNotifies == 0)
        }

        @Test func aWriteThroughOneInstanceWakesALongPollOnAnother() throws {
            let server = try TestServer()
            defer { server.stop() }
            let other = try TestFerryInstance(database: server.database)
            defer { other.stop() }
            let (alice, set, poll) = try Self.alicesLongPoll(server, port: other.port) { try Self.waiting(other) }
            let wakes = other.app.live.wakes
            // Through the first instance only: the other learns of it from the first's NOTIFY.
            let term = try server.createTerm(in: set, word: "across", token: alice.token)
            let response = try poll.response()
            #expect(response.status == 200)
            #expect(LongPollTests.ids(response, "terms") == [term])
            #expect(other.app.live.wakes > wakes)
            #expect(Date().timeIntervalSince(poll.started) < 50)
            #expect(server.app.live.hintNotifies > 0)
        }

        /// A batch runs in an explicit transaction (`callerTransaction`): its hints are read just before its COMMIT.
        @Test func aBatchWriteWakesALongPollOnAnotherInstance() throws {
            let server = try TestServer()
            defer { server.stop() }
            let other = try TestFerryInstance(database: server.database)
            defer { other.stop() }
            let (alice, set, poll) = try Self.alicesLongPoll(server, port: other.port) { try Self.waiting(other) }
            let published = server.app.live.hintsPublished
            let batch = try server.client().request(
                "POST", "/v1/batch", headers: [("Authorization", "Bearer \(alice.token)")],
                json: ["operations": [["method": "POST", "path": "/v1/terms", "body": ["set_id": set, "word": "batched", "definition": "d"]]]])
            #expect(batch.status == 200, "\(batch.text)")
            let response = try poll.response()
            #expect(LongPollTests.ids(response, "terms").count == 1)
            #expect(server.app.live.hintsPublished > published)
            #expect(Date().timeIntervalSince(poll.started) < 50)
        }

        /// Issue 47 item 4: a one-row PATCH marks its statement in its own RETURNING clause
        /// (the table's `ferry.sync_mark_<oid>`), so the notify trigger's PL/pgSQL
        /// function returns at its first statement, and Ferry makes the row's hints from
        /// what the statement returned: the trigger's lines, in its order, which wake a
        /// long poll and reach the other instances; an UPDATE from psql still goes through
        /// that function and wakes it too.
        @Test func aPatchWakesALongPollPastNoMoreOfTheNotifyFunctionAndPsqlStillDoes() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            // Made outside Ferry: the PATCH is the first write through Ferry's connections,
            // whose sessions never collected a hint (`ferry.hints` is then NULL, not '').
            let term =
                try server.ownerQuery("INSERT INTO app.terms (set_id, word, definition) VALUES ($1, 'before', 'd') RETURNING id", [set])
                .rows[0][0] ?? ""
            let terms = try server.ownerQuery("SELECT 'app.terms'::regclass::oid::text").rows[0][0] ?? ""
            // The notify function keeps its first statement (a statement whose RETURNING
            // collected its hints returns there) and then fails the write.
            _ = try server.ownerQuery(
                """
                CREATE OR REPLACE FUNCTION ferry.sync_notify_\(terms)() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN
                    IF current_setting('ferry.hinted', true) = '\(terms)' AND pg_trigger_depth() = 1 THEN
                        PERFORM set_config('ferry.hinted', '', true);
                        RETURN NULL;
                    END IF;
                    RAISE EXCEPTION 'past the first statement';
                END $f$
                """)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            // Named as an instance's listener: another instance listens, so the server sends.
            let listener = try server.database.connect(applicationName: "ferry-listen")
            defer { listener.close() }
            try listener.listen(["ferry_changes"])
            _ = try Self.drain(listener)
            let published = server.app.live.hintsPublished
            let patch = try server.client().request(
                "PATCH", "/v1/terms/\(term)", headers: [("Authorization", "Bearer \(alice.token)"), ("If-Match", "*")],
                json: ["word": "patched"])
            #expect(patch.status == 200, "\(patch.text)")
            let response = try poll.response()
            #expect(LongPollTests.ids(response, "terms") == [term])
            #expect(server.app.live.hintsPublished == published + 2)
            #expect(Date().timeIntervalSince(poll.started) < 50)
            // What the instance sent the others: the lines the trigger makes (scope, then
            // writer), with the row's stamp.
            let sets = try server.ownerQuery("SELECT 'app.study_sets'::regclass::oid::text").rows[0][0] ?? ""
            let stamp = try server.ownerQuery("SELECT _ferry_xid::text FROM app.terms WHERE id = $1", [term]).rows[0][0] ?? ""
            var payloads: [String] = []
            try waitUntil("the instance's NOTIFY of the PATCH", within: 30) {
                payloads += try Self.drain(listener)
                return !payloads.isEmpty
            }
            #expect(
                payloads.flatMap { $0.split(separator: "\n").dropFirst().map(String.init) }
                    == ["\(stamp) \(terms) s \(sets) \(set)", "\(stamp) \(terms) u \(alice.id)"], "\(payloads)")

            // The function as `ferry migrate` makes it; a write from psql enters it and wakes a poll.
            _ = try server.ownerQuery("SELECT ferry.refresh_sync_notify('app.terms')")
            try feed.catchUp(pastXID: try server.maxXID())
            let second = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            _ = try server.ownerQuery("UPDATE app.terms SET word = 'from psql' WHERE id = $1", [term])
            let answer = try second.response()
            #expect(LongPollTests.ids(answer, "terms") == [term])
            #expect(Date().timeIntervalSince(second.started) < 50)
        }

        @Test func aWriteWithPlainSQLWakesALongPollWhenItCommits() throws {
            let server = try TestServer()
            defer { server.stop() }
            let (_, set, poll) = try Self.alicesLongPoll(server, port: server.port) { try server.waitForWaiters(1) }
            let wakes = server.app.live.wakes
            let published = server.app.live.hintsPublished
            // A batch job's write from psql, by no Ferry user: its trigger notifies at its commit.
            let term =
                try server.ownerQuery(
                    "INSERT INTO app.terms (set_id, word, definition) VALUES ($1, 'from psql', 'd') RETURNING id", [set]
                ).rows[0][0] ?? ""
            let response = try poll.response()
            #expect(LongPollTests.ids(response, "terms") == [term])
            #expect(server.app.live.wakes > wakes)
            #expect(server.app.live.hintsPublished == published)
            #expect(Date().timeIntervalSince(poll.started) < 50)
        }
    }
}
