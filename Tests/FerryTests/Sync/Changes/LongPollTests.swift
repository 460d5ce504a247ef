import Dispatch
import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// A request sent now whose answer is read later, on a thread of its own:
/// a long poll the test wakes meanwhile.
final class PendingRequest: Sendable {
    private let result = Mutex<Result<TestHTTPClient.Response, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)
    let started = Date()

    init(
        port: Int, _ path: String, token: String, headers: [(String, String)] = [], timeout: Double = 90, method: String = "GET",
        body: [UInt8]? = nil
    ) {
        let headers = [("Authorization", "Bearer \(token)")] + headers
        // A thread of its own: Linux's global dispatch queue runs about as many
        // blocking jobs at once as there are cores, and a fan-out test holds dozens.
        Thread { [self] in
            let client = TestHTTPClient(port: port, timeout: timeout)
            let outcome = Result { try client.request(method, path, headers: headers, body: body) }
            result.withLock { $0 = outcome }
            done.signal()
        }.start()
    }

    /// Whether the answer has come.
    var isAnswered: Bool { result.withLock { $0 != nil } }

    /// The answer, waiting up to `seconds` for it.
    func response(within seconds: Double = 90) throws -> TestHTTPClient.Response {
        guard done.wait(timeout: .now() + seconds) == .success else { throw WaitTimedOut("the long poll's answer", seconds: seconds) }
        done.signal()
        return try result.withLock { $0! }.get()
    }
}

/// The ids of the rows of `resource` in a feed page (`{"changes": [...]}`).
func changedIDs(_ page: [String: Any], _ resource: String) -> Set<String> {
    let changes = page["changes"] as? [[String: Any]] ?? []
    return Set(
        changes.compactMap { change in
            guard change["resource"] as? String == resource else { return nil }
            return (change["data"] as? [String: Any])?["id"] as? String
        })
}

extension TestServer {
    /// A user who has caught up with the feed: their token and cursor.
    func caughtUpUser(_ name: String) throws -> (id: String, token: String, cursor: String) {
        let user = try self.user(name)
        let feed = FeedFollower(server: self, token: user.token)
        try feed.catchUp(pastXID: try maxXID())
        return (user.id, user.token, feed.cursor ?? "")
    }

    /// Creates a term in `set` through the API as the holder of `token`: the write
    /// names its writer, as an app's does (a write from psql names no one).
    @discardableResult
    func createTerm(in set: String, word: String, token: String) throws -> String {
        let response = try waitFor("the term to be created") {
            let response = try client().request(
                "POST", "/v1/terms", headers: [("Authorization", "Bearer \(token)")],
                json: ["set_id": set, "word": word, "definition": "d"])
            return response.status == 503 ? nil : response
        }
        guard response.status == 201, let id = response.object["id"] as? String else {
            throw FeedFollower.Failure(description: "create answered \(response.status): \(response.text)")
        }
        return id
    }

    /// Shares `set` with `userID` (the creator's write, from psql).
    func share(_ set: String, with userID: String) throws {
        _ = try ownerQuery("INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $2)", [set, userID])
    }

    /// Waits until this instance holds `count` waiters, each parked (its check done).
    func waitForWaiters(_ count: Int) throws {
        try waitUntil("\(count) parked waiters", within: 30) { app.live.waiters == count && app.live.checksRunning == 0 }
    }
}

extension ChangesSuites {
    /// `GET /v1/changes?wait=`: answered at once when the feed has something,
    /// else held with no worker until a commit the caller may see is in the
    /// feed, or until the deadline.
    @Suite struct LongPollTests {
        /// The ids of the rows of `resource` in a feed answer.
        static func ids(_ response: TestHTTPClient.Response, _ resource: String) -> Set<String> {
            changedIDs(response.object, resource)
        }

        @Test func answersAtOnceWhenTheFeedHasSomething() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            try waitUntil("the set to be in the feed", within: 60) {
                let response = try server.client().request(
                    "GET", "/v1/changes?wait=30",
                    headers: [("Authorization", "Bearer \(alice.token)")])
                return Self.ids(response, "study_sets") == [set]
            }
            #expect(server.app.live.waiters == 0)
        }

        @Test func theWaitersOwnWriteFromAnotherDeviceWakesIt() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let cursor = try #require(feed.cursor)
            let wakes = server.app.live.wakes
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(cursor)&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            #expect(!poll.isAnswered)
            let term = try server.createTerm(in: set, word: "hola", token: alice.token)
            let response = try poll.response()
            #expect(response.status == 200)
            #expect(Self.ids(response, "terms") == [term])
            #expect(response.header("ETag") == "\"\(response.object["cursor"] as? String ?? "")\"")
            // Woken by the commit, well before the deadline.
            #expect(server.app.live.wakes > wakes)
            #expect(Date().timeIntervalSince(poll.started) < 50)
            #expect(server.app.live.waiters == 0)
        }

        @Test func aCollaboratorIsWokenByAnEditInTheSharedSet() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let bob = try server.user("bob")
            let set = try server.makeSet(for: alice.id, title: "shared")
            try server.share(set, with: bob.id)
            let feed = FeedFollower(server: server, token: bob.token)
            try feed.catchUp(pastXID: try server.maxXID())
            #expect(feed.rows["study_sets/\(set)"] != nil)
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: bob.token)
            try server.waitForWaiters(1)
            // Alice's write names Alice; Bob is found through the set he can read.
            let term = try server.createTerm(in: set, word: "shared word", token: alice.token)
            let response = try poll.response()
            #expect(Self.ids(response, "terms") == [term])
            #expect(Date().timeIntervalSince(poll.started) < 50)
        }

        @Test func aWriteTheWaiterCannotSeeDoesNotWakeIt() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let carol = try server.user("carol")
            let privateSet = try server.makeSet(for: alice.id, title: "private")
            let feed = FeedFollower(server: server, token: carol.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: carol.token)
            try server.waitForWaiters(1)
            // Carol's first check has named her: from now on only hints that concern her wake her.
            try waitUntil("carol's check to name her", within: 30) { !server.app.live.registryHasAnonymousWaiters }
            let hints = server.app.live.hintsReceived
            let wakes = server.app.live.wakes
            _ = try server.createTerm(in: privateSet, word: "secret", token: alice.token)
            try waitUntil("the hint of Alice's write", within: 30) { server.app.live.hintsReceived > hints }
            #expect(server.app.live.wakes == wakes)
            #expect(server.app.live.waiters == 1)
            #expect(!poll.isAnswered)
            // A write Carol can see does.
            let own = try server.makeSet(for: carol.id, title: "carol's")
            let response = try poll.response()
            #expect(Self.ids(response, "study_sets") == [own])
        }

        @Test func atTheDeadlineItAnswersAsAPollDoes() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let cursor = try #require(feed.cursor)
            let auth = ("Authorization", "Bearer \(alice.token)")
            let started = Date()
            let notModified = try server.client().request(
                "GET", "/v1/changes?since=\(cursor)&wait=1",
                headers: [auth, ("If-None-Match", "\"\(cursor)\"")])
            #expect(notModified.status == 304)
            #expect(notModified.header("ETag") != nil)
            #expect(Date().timeIntervalSince(started) >= 0.9)
            let empty = try server.client().request("GET", "/v1/changes?since=\(cursor)&wait=1", headers: [auth])
            #expect(empty.status == 200)
            #expect((empty.object["changes"] as? [Any])?.isEmpty == true)
            #expect(empty.object["has_more"] as? Bool == false)
            #expect(server.app.live.waiters == 0)
        }

        @Test func aLongWaitIsCutToTheConfiguredLongest() throws {
            let server = try TestServer { $0.live.maxWaitSeconds = 1 }
            defer { server.stop() }
            let alice = try server.user("alice")
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=3600", token: alice.token)
            #expect(try poll.response(within: 30).status == 200)
        }

        @Test func badWaitsAre400() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            for wait in ["-1", "x", "1.5", "", "99999999999"] {
                let response = try server.client().request(
                    "GET", "/v1/changes?wait=\(wait)",
                    headers: [("Authorization", "Bearer \(alice.token)")])
                #expect(response.status == 400, "wait=\(wait)")
                #expect(response.object["code"] as? String == "invalid_query")
                #expect(response.header("Cache-Control") == "no-store")
            }
        }

        /// The feed's promise, live: an older transaction still running holds a
        /// newer commit back; when it ends (sending no hint of its own), the
        /// frontier watch wakes the waiter, and nothing is missed.
        @Test func aLateCommittingOlderTransactionStillReachesItsWaiter() throws {
            let server = try TestServer()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id)
            let old = try server.makeTerms(in: set, count: 1)[0]
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            // T1 takes its stamp first and keeps running (as a writer of synced
            // rows does at its first one, core 0032; a transaction that stamps
            // nothing no longer holds the feed).
            let older = try PostgresConnection(url: server.database.ownerURL)
            defer { older.close() }
            try older.execute("BEGIN")
            _ = try older.query("SELECT ferry.stamp()")
            let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            // T2 commits: its hint wakes the waiter, whose check finds the row held back by T1.
            let holds = server.app.live.holds
            let newer = try server.createTerm(in: set, word: "newer", token: alice.token)
            try waitUntil("the waiter to be held for the frontier", within: 30) { server.app.live.heldWaiters == 1 }
            #expect(server.app.live.holds == holds + 1)
            #expect(!poll.isAnswered)
            // T1 ends without a hint (it wrote no synced row): only the frontier watch can wake the waiter.
            try older.execute("COMMIT")
            let response = try poll.response()
            #expect(Self.ids(response, "terms") == [newer])

            // The same with a T1 that writes a row the waiter sees: both arrive, in feed order.
            let cursor = try #require(response.object["cursor"] as? String)
            try older.execute("BEGIN")
            _ = try older.query("UPDATE app.terms SET word = 'older' WHERE id = $1", [old])
            let second = PendingRequest(port: server.port, "/v1/changes?since=\(cursor)&wait=60", token: alice.token)
            try server.waitForWaiters(1)
            let newest = try server.createTerm(in: set, word: "newest", token: alice.token)
            try waitUntil("the waiter to be held for the frontier", within: 30) { server.app.live.heldWaiters == 1 }
            try older.execute("COMMIT")
            let answer = try second.response()
            var received = Self.ids(answer, "terms")
            // The two may come in one answer or two.
            if received.count < 2, let after = answer.object["cursor"] as? String {
                let third = try server.client().request(
                    "GET", "/v1/changes?since=\(after)&wait=60",
                    headers: [("Authorization", "Bearer \(alice.token)")])
                received.formUnion(Self.ids(third, "terms"))
            }
            #expect(received == [old, newest])
        }

        @Test func shutdownAnswersEveryWaiter() throws {
            let server = try TestServer()
            defer { server.app.close(); server.database.drop() }
            let alice = try server.user("alice")
            let bob = try server.user("bob")
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let cursor = try #require(feed.cursor)
            let polls = [
                PendingRequest(port: server.port, "/v1/changes?since=\(cursor)&wait=60", token: alice.token),
                PendingRequest(
                    port: server.port, "/v1/changes?since=\(cursor)&wait=60", token: alice.token,
                    headers: [("If-None-Match", "\"\(cursor)\"")]),
                PendingRequest(port: server.port, "/v1/changes?wait=60&resources=folders", token: bob.token),
            ]
            try server.waitForWaiters(3)
            let started = Date()
            server.server.shutdown()
            let answers = try polls.map { try $0.response(within: 20) }
            #expect(Date().timeIntervalSince(started) < 15)
            // Each gets what it already had: its own cursor, and no changes.
            #expect(answers[0].status == 200)
            #expect(answers[0].object["cursor"] as? String == cursor)
            #expect((answers[0].object["changes"] as? [Any])?.isEmpty == true)
            #expect(answers[1].status == 304)
            #expect(answers[2].status == 200)
            #expect(answers.allSatisfy { $0.header("Connection") == "close" })
            #expect(server.app.live.waiters == 0)
        }

        @Test func limitsPerUserAndPerInstanceAnswer429And503() throws {
            let server = try TestServer {
                $0.live.maxWaiters = 3
                $0.live.maxWaitersPerUser = 2
            }
            defer { server.stop() }
            let alice = try server.user("alice")
            let bob = try server.user("bob")
            let since = "since=now"
            let start = try server.client().request("GET", "/v1/changes?\(since)", headers: [("Authorization", "Bearer \(alice.token)")])
            let cursor = try #require(start.object["cursor"] as? String)
            let path = "/v1/changes?since=\(cursor)&wait=60"
            let held = [
                PendingRequest(port: server.port, path, token: alice.token),
                PendingRequest(port: server.port, path, token: alice.token),
            ]
            try server.waitForWaiters(2)
            let third = try server.client().request("GET", path, headers: [("Authorization", "Bearer \(alice.token)")])
            #expect(third.status == 429)
            #expect(third.object["code"] as? String == "too_many_waiters")
            #expect(third.header("Retry-After") != nil)
            #expect(third.header("Cache-Control") == "no-store")
            // A plain poll is never refused.
            #expect(
                try server.client().request(
                    "GET", "/v1/changes?since=\(cursor)",
                    headers: [("Authorization", "Bearer \(alice.token)")]
                ).status == 200)
            let bobs = PendingRequest(port: server.port, path, token: bob.token)
            try server.waitForWaiters(3)
            let full = try server.client().request("GET", path, headers: [("Authorization", "Bearer \(bob.token)")])
            #expect(full.status == 503)
            #expect(full.object["code"] as? String == "unavailable")
            #expect(full.header("Retry-After") != nil)
            server.server.shutdown()
            for poll in held + [bobs] { #expect(try poll.response(within: 20).status == 200) }
        }
    }
}
