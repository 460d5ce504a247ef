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

        /// Issue 47 item 4: a one-row PATCH marks its row in its own SET list
        /// (`ferry.made`, ``RowHints/madeHere(_:)``), so the row's update trigger leaves its
        /// hints to Ferry (the table has no UPDATE statement trigger), and Ferry makes them
        /// from what the statement returned: the trigger's lines, in its order, which wake a
        /// long poll and reach the other instances; an UPDATE from psql is hinted by the
        /// trigger and wakes it too.
        @Test func aPatchWakesALongPollWithoutTheTriggersHintsAndPsqlStillDoes() throws {
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
            // A trigger that runs after Ferry's update trigger fails the write if that one
            // collected the row's hints, or if the row was not marked as Ferry's.
            _ = try server.ownerQuery(
                """
                CREATE FUNCTION app.no_hints_probe() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN
                    IF coalesce(current_setting('ferry.hints', true), '') <> '' OR current_setting('ferry.made', true) IS DISTINCT FROM '\(terms) ' || NEW.id THEN
                        RAISE EXCEPTION 'the update trigger hinted the row Ferry marked';
                    END IF;
                    RETURN NEW;
                END $f$
                """)
            _ = try server.ownerQuery(
                "CREATE TRIGGER zzz_no_hints_probe BEFORE UPDATE ON app.terms FOR EACH ROW EXECUTE FUNCTION app.no_hints_probe()")
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

            // Without the probe, a write from psql is hinted by the update trigger and wakes a poll.
            _ = try server.ownerQuery("DROP TRIGGER zzz_no_hints_probe ON app.terms")
            _ = try server.ownerQuery("DROP FUNCTION app.no_hints_probe()")
            try feed.catchUp(pastXID: try server.maxXID())
            let second = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            _ = try server.ownerQuery("UPDATE app.terms SET word = 'from psql' WHERE id = $1", [term])
            let answer = try second.response()
            #expect(LongPollTests.ids(answer, "terms") == [term])
            #expect(Date().timeIntervalSince(second.started) < 50)
        }

        /// A one-row UPDATE that marked its row but wrote nothing (here an app's BEFORE
        /// trigger skips every row Ferry marks; a concurrent writer can do the same) must not
        /// leave its mark to the next write of its transaction: a batch runs its fallback
        /// after it in the same transaction, and that write is the trigger's to hint
        /// (``RowHints/unmark``). Without the unmark, the fallback is skipped too.
        @Test func aBatchsWriteAfterAOneRowUpdateThatWroteNothingIsWrittenAndHinted() throws {
            let server = try TestServer()
            defer { server.stop() }
            let (alice, set, poll) = try Self.alicesLongPoll(server, port: server.port) { try server.waitForWaiters(1) }
            let terms = try server.ownerQuery("SELECT 'app.terms'::regclass::oid::text").rows[0][0] ?? ""
            let term =
                try server.ownerQuery("INSERT INTO app.terms (set_id, word, definition) VALUES ($1, 'before', 'd') RETURNING id", [set])
                .rows[0][0] ?? ""
            _ = try poll.response()
            _ = try server.ownerQuery(
                """
                CREATE FUNCTION app.skip_marked() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN
                    IF current_setting('ferry.made', true) LIKE '\(terms) %' THEN RETURN NULL; END IF;
                    RETURN NEW;
                END $f$
                """)
            _ = try server.ownerQuery("CREATE TRIGGER a_skip_marked BEFORE UPDATE ON app.terms FOR EACH ROW EXECUTE FUNCTION app.skip_marked()")
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let second = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            let batch = try server.client().request(
                "POST", "/v1/batch", headers: [("Authorization", "Bearer \(alice.token)")],
                json: [
                    "operations": [
                        ["method": "PATCH", "path": "/v1/terms/\(term)", "headers": ["If-Match": "*"], "body": ["word": "after the skip"]]
                    ]
                ])
            #expect(batch.status == 200, "\(batch.text)")
            let word = try server.ownerQuery("SELECT word FROM app.terms WHERE id = $1", [term]).rows[0][0]
            #expect(word == "after the skip", "\(batch.text)")
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
