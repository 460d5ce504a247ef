@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// `POST /v1/changes/wait` over the wire (API.md, "One wait for several
/// streams"): one waiting request for a device's default stream and its
/// subscriptions, answering which of them have news.
@Suite struct ChangesWaitTests {
    typealias World = SyncStreamTests.World

    /// A world whose waits end at their own `wait` (an hour): an answer before
    /// it comes from a wake, never from a deadline's check.
    static func world() throws -> World {
        try SyncStreamTests.world { $0.live.maxWaitSeconds = 3_600 }
    }

    static func token(_ auth: [(String, String)]) -> String {
        String(auth[0].1.dropFirst("Bearer ".count))
    }

    /// A waiting `POST /v1/changes/wait`.
    static func wait(_ w: World, _ auth: [(String, String)], seconds: Int = 3_600, since: [String: String]) -> PendingRequest {
        PendingRequest(
            port: w.server.port, "/v1/changes/wait", token: token(auth), headers: [("Content-Type", "application/json")], method: "POST",
            body: body(wait: seconds, since: since))
    }

    static func body(wait: Int, since: [String: String]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: ["wait": wait, "since": since])) ?? Data())
    }

    /// The keys of a 200 answer's `changed`.
    static func changed(_ answer: TestHTTPClient.Response) -> [String]? {
        #expect(answer.status == 200, "\(answer.text.prefix(300))")
        #expect(answer.header("Cache-Control") == "private, no-store")
        return answer.object["changed"] as? [String]
    }

    /// Bob follows Alice's public set: the set's stream, his default stream, and his cursors on both.
    static func bobFollows(_ w: World) throws -> (set: (id: String, terms: [String]), since: [String: String]) {
        let open = try SyncStreamTests.set(w, public: true, terms: 1)
        let stream = try w.feed("stream=set:\(open.id)", w.bob) { $0.count >= 2 }
        let own = try w.feed("", w.bob)
        return (open, ["default": own.cursor, "set:\(open.id)": stream.cursor])
    }

    @Test func aWriteInASubscribedPublicSetByAnotherUserWakesIt() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let (open, since) = try Self.bobFollows(w)
        let waiter = Self.wait(w, w.bob, since: since)
        try w.server.waitForWaiters(1)
        #expect(!waiter.isAnswered)
        let term = try SyncStreamTests.term(w, in: open.id, word: "news")
        #expect(Self.changed(try waiter.response()) == ["set:\(open.id)"])
        // Its GET finds the term.
        let page = try w.get("/v1/changes?stream=set:\(open.id)&since=\(since["set:\(open.id)"] ?? "")", w.bob)
        #expect(changedIDs(page.object, "terms") == [term])
    }

    @Test func aWriteInTheDefaultStreamByAnotherUserWakesIt() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        // Bob is a member of Alice's private set: it is in his default stream.
        let shared = try SyncStreamTests.set(w, public: false, terms: 0)
        let bobID = try w.server.database.column("SELECT id::text FROM ferry.users WHERE name = 'bob'")[0]
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": shared.id, "user_id": bobID])
        try #require(member.status == 201, "\(member.text)")
        let (_, since) = try Self.bobFollows(w)
        let own = try w.feed("", w.bob) { entries in entries.contains { $0.1 == shared.id } }
        var all = since
        all["default"] = own.cursor
        let waiter = Self.wait(w, w.bob, since: all)
        try w.server.waitForWaiters(1)
        _ = try SyncStreamTests.term(w, in: shared.id, word: "for members")
        #expect(Self.changed(try waiter.response()) == ["default"])
    }

    @Test func aStreamTheCallerMayNotReadNeverWakesNorAnswersIt() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let closed = try SyncStreamTests.set(w, public: false, terms: 1)
        let cursor = try w.feed("stream=set:\(closed.id)", w.alice) { $0.count >= 2 }.cursor
        let nowhere = "set:\(UUID().uuidString.lowercased())"
        // Carol waits on Alice's private set and on a set that does not exist; Alice on her set.
        let carol = Self.wait(w, w.carol, seconds: 2, since: ["set:\(closed.id)": cursor, nowhere: cursor])
        let alice = Self.wait(w, w.alice, since: ["set:\(closed.id)": cursor])
        try w.server.waitForWaiters(2)
        _ = try SyncStreamTests.term(w, in: closed.id, word: "secret")
        #expect(Self.changed(try alice.response()) == ["set:\(closed.id)"])
        // Carol's answer, after her wait, is the same as for a stream with nothing in it.
        #expect(Self.changed(try carol.response()) == [])
        let after = try w.client.request(
            "POST", "/v1/changes/wait", headers: w.carol, json: ["wait": 0, "since": ["set:\(closed.id)": cursor, nowhere: cursor]])
        #expect(Self.changed(after) == [])
    }

    @Test func itAnswersAtOnceWhenAStreamAlreadyHasNews() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let (open, since) = try Self.bobFollows(w)
        _ = try SyncStreamTests.term(w, in: open.id, word: "before")
        // The frontier may wait a moment for transactions elsewhere in the cluster: poll without waiting until it shows.
        try waitUntil("the term to be in Bob's stream", within: 30) {
            (try? w.get("/v1/changes?stream=set:\(open.id)&since=\(since["set:\(open.id)"] ?? "")", w.bob).object)
                .map { !changedIDs($0, "terms").isEmpty } == true
        }
        let waiter = Self.wait(w, w.bob, since: since)
        #expect(Self.changed(try waiter.response()) == ["set:\(open.id)"])
        // wait: 0 answers at once too, with nothing when nothing is new.
        let quiet = try w.client.request(
            "POST", "/v1/changes/wait", headers: w.bob, json: ["wait": 0, "since": ["default": since["default"] ?? ""]])
        #expect(Self.changed(quiet) == [])
    }

    @Test func shutdownAnswersAnOpenWaitWithNothingChanged() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let (_, since) = try Self.bobFollows(w)
        let waiters = [Self.wait(w, w.bob, since: since), Self.wait(w, w.alice, since: ["default": since["default"] ?? ""])]
        try w.server.waitForWaiters(2)
        let started = ContinuousClock.now
        w.server.server.shutdown()
        // A clean answer, not a hang nor a dropped connection: what each had, nothing new.
        for waiter in waiters {
            let answer = try waiter.response(within: 30)
            #expect(Self.changed(answer) == [], "\(answer.text.prefix(300))")
            #expect(answer.header("Connection") == "close")
        }
        #expect(ContinuousClock.now - started < .seconds(25))
        #expect(w.server.app.live.waiters == 0)
    }

    @Test func theInstanceLimitAnswers503OnlyToAWaitThatWouldHaveToWait() throws {
        let w = try SyncStreamTests.world {
            $0.live.maxWaitSeconds = 3_600
            $0.live.maxWaiters = 1
        }
        defer { w.server.stop() }
        let before = try w.feed("", w.alice).cursor
        let (open, since) = try Self.bobFollows(w)
        let held = Self.wait(w, w.bob, since: since)
        try w.server.waitForWaiters(1)
        // Alice's wait, with nothing new, is one waiter too many for the instance. Her cursor is
        // past her own set's term: the frontier may hold a commit back a moment (a transaction
        // elsewhere in the cluster), and a cursor below it would make her wait find news.
        let now = try w.feed("", w.alice) { entries in entries.contains { $0.1 == open.terms[0] } }.cursor
        let full = try w.client.request(
            "POST", "/v1/changes/wait", headers: w.alice,
            json: ["wait": 60, "since": ["default": now, "set:\(open.id)": since["set:\(open.id)"] ?? ""]])
        #expect(full.status == 503, "\(full.text.prefix(300))")
        #expect(full.object["code"] as? String == "unavailable")
        #expect(full.header("Retry-After") != nil)
        #expect((full.object["detail"] as? String)?.contains("(1)") == true, "\(full.text)")
        // One with something to answer is answered, limit or not: her set came after her older cursor.
        let older = try w.client.request("POST", "/v1/changes/wait", headers: w.alice, json: ["wait": 60, "since": ["default": before]])
        #expect(Self.changed(older) == ["default"], "\(older.text.prefix(300))")
        #expect(w.server.app.live.waiters == 1)
        // Bob's wait, still held, is woken as usual.
        _ = try SyncStreamTests.term(w, in: open.id, word: "news")
        #expect(Self.changed(try held.response()) == ["set:\(open.id)"])
    }

    @Test func aStreamWhoseCursorExpiredIsReportedAsChanged() throws {
        let w = try Self.world()
        defer { w.server.stop() }
        let (open, since) = try Self.bobFollows(w)
        let key = "set:\(open.id)"
        // The set's term is deleted; its tombstone, made to look 40 days old, is purged past Bob's cursor.
        let connection = try PostgresConnection(url: w.server.database.ownerURL)
        defer { connection.close() }
        _ = try connection.query("DELETE FROM app.terms WHERE id = $1", [open.terms[0]])
        _ = try connection.query("ALTER TABLE app.terms DISABLE TRIGGER zz_ferry_sync_update", [])
        _ = try connection.query("UPDATE app.terms SET last_modified = last_modified - 40 * 86400000::bigint WHERE id = $1", [open.terms[0]])
        _ = try connection.query("ALTER TABLE app.terms ENABLE TRIGGER zz_ferry_sync_update", [])
        #expect(try TombstonePurge.run(connection: connection, ageMs: TombstonePurge.ageMs(days: 30), batch: 10) >= 1)
        let gone = try w.get("/v1/changes?stream=\(key)&since=\(since[key] ?? "")", w.bob)
        try #require(gone.status == 410, "\(gone.text.prefix(300))")
        // Reported as changed, at once (wait: 0) and by a wait that would otherwise wait an hour, so that the GET meets its 410.
        for seconds in [0, 3_600] {
            let answer = try Self.wait(w, w.bob, seconds: seconds, since: [key: since[key] ?? ""]).response(within: 60)
            #expect(Self.changed(answer) == [key], "wait \(seconds): \(answer.text.prefix(300))")
        }
    }

    @Test func theListingSaysHowManyStreamsOneWaitTakes() throws {
        let w = try SyncStreamTests.world { $0.live.maxWaitStreams = 2 }
        defer { w.server.stop() }
        let listing = try w.get("/v1", w.bob)
        try #require(listing.status == 200, "\(listing.text.prefix(300))")
        #expect((listing.object["live"] as? [String: Any])?["max_wait_streams"] as? Int == 2, "\(listing.text.suffix(300))")
        // As many as it says are taken; one more is the 400 a client that reads it never meets.
        let cursor = try w.feed("", w.bob).cursor
        let keys = (0..<3).map { _ in "set:\(UUID().uuidString.lowercased())" }
        let two = try w.client.request(
            "POST", "/v1/changes/wait", headers: w.bob, json: ["wait": 0, "since": [keys[0]: cursor, keys[1]: cursor]])
        #expect(Self.changed(two) == [])
        let three = try w.client.request(
            "POST", "/v1/changes/wait", headers: w.bob, json: ["wait": 0, "since": Dictionary(uniqueKeysWithValues: keys.map { ($0, cursor) })])
        #expect(three.status == 400, "\(three.text)")
    }

    @Test func aBadBodyIs400NamingTheCause() throws {
        let w = try SyncStreamTests.world { $0.live.maxWaitStreams = 2 }
        defer { w.server.stop() }
        let (client, bob) = (w.client, w.bob)
        let cursor = try client.request("GET", "/v1/changes", headers: bob).object["cursor"] as? String ?? ""
        let uuid = UUID().uuidString.lowercased(), other = UUID().uuidString.lowercased()
        let cases: [(body: String, cause: String)] = [
            ("not json", "not valid JSON"),
            ("[1]", "must be a JSON object"),
            (#"{"since": {}}"#, "wait must be"),
            (#"{"wait": -1, "since": {}}"#, "wait must be"),
            (#"{"wait": 1.5, "since": {}}"#, "wait must be"),
            (#"{"wait": "5", "since": {}}"#, "wait must be"),
            (#"{"wait": true, "since": {}}"#, "wait must be"),
            (#"{"wait": 5}"#, "since must be"),
            (#"{"wait": 5, "since": []}"#, "since must be"),
            (#"{"wait": 5, "since": {"default": 7}}"#, "since must be"),
            (#"{"wait": 5, "since": {}, "limit": 3}"#, "no member limit"),
            (#"{"wait": 5, "since": {"Set:1": "\#(cursor)"}}"#, "neither default nor"),
            (#"{"wait": 5, "since": {"default": "nope"}}"#, "not a cursor"),
            (#"{"wait": 5, "since": {"nope:\#(uuid)": "\#(cursor)"}}"#, "no stream named nope"),
            (#"{"wait": 5, "since": {"set:42": "\#(cursor)"}}"#, "id type"),
            (#"{"wait": 5, "since": {"default": "\#(cursor)", "set:\#(uuid)": "\#(cursor)", "set:\#(other)": "\#(cursor)"}}"#, "at most 2"),
        ]
        for (body, cause) in cases {
            let answer = try client.request(
                "POST", "/v1/changes/wait", headers: bob + [("Content-Type", "application/json")], body: Array(body.utf8))
            #expect(answer.status == 400, "\(body): \(answer.text)")
            #expect(answer.object["code"] as? String == "invalid_json", "\(body): \(answer.text)")
            #expect((answer.object["detail"] as? String)?.contains(cause) == true, "\(body): \(answer.text)")
        }
        // A bad token is 401 before any body error; a batch does not take it.
        let stranger = try client.request("POST", "/v1/changes/wait", headers: [("Authorization", "Bearer nope")], json: ["wait": -1])
        #expect(stranger.status == 401)
        // Even with no stream to wait on (schemathesis found it answered 200).
        for wait in [0, 1] {
            let nothing = try client.request(
                "POST", "/v1/changes/wait", headers: [("Authorization", "Bearer nope")], json: ["wait": wait, "since": [String: String]()])
            #expect(nothing.status == 401, "\(nothing.text)")
        }
        let batch = try client.request(
            "POST", "/v1/batch", headers: bob,
            json: ["operations": [["method": "POST", "path": "/v1/changes/wait", "body": ["wait": 0, "since": ["default": cursor]]]]])
        #expect(batch.status == 400, "\(batch.text)")
        #expect(batch.text.contains("batch"), "\(batch.text)")
    }

    @Test func itCountsAsOneWaiterAgainstTheLimits() throws {
        let w = try SyncStreamTests.world {
            $0.live.maxWaitersPerUser = 1
            $0.live.maxWaitSeconds = 3_600
        }
        defer { w.server.stop() }
        let (server, client, bob) = (w.server, w.client, w.bob)
        let made = try client.request("POST", "/v1/sets", headers: bob, json: ["title": "mine", "is_public": true])
        let set = try #require(made.object["id"] as? String)
        // A cursor past the set (the frontier may hold its commit back a moment: other tests' transactions).
        var cursor = ""
        try waitUntil("the set in Bob's feed", within: 30) {
            let page = try client.request("GET", "/v1/changes" + (cursor.isEmpty ? "" : "?since=\(cursor)"), headers: bob).object
            cursor = page["cursor"] as? String ?? cursor
            return changedIDs(page, "sets").contains(set)
        }
        let since = ["default": cursor, "set:\(set)": cursor]
        let first = Self.wait(w, bob, since: since)
        try server.waitForWaiters(1)
        // Two streams, one waiter: a second wait, or a long poll, is over the user's limit.
        let second = try client.request("POST", "/v1/changes/wait", headers: bob, json: ["wait": 60, "since": since])
        #expect(second.status == 429, "\(second.text)")
        #expect(second.header("Retry-After") != nil)
        let poll = try client.request("GET", "/v1/changes?since=\(cursor)&wait=60", headers: bob)
        #expect(poll.status == 429)
        // Its own write wakes it.
        let another = try client.request("POST", "/v1/sets", headers: bob, json: ["title": "another"])
        #expect(another.status == 201, "\(another.text)")
        let answer = try first.response()
        #expect(answer.status == 200)
        #expect((answer.object["changed"] as? [String])?.contains("default") == true, "\(answer.text)")
    }
}
