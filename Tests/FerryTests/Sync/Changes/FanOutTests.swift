import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// One commit, many waiters of several users on one shared set (issue 46,
    /// "One query per change"): each is answered with exactly what its own
    /// feed query gives, over the wire, whether its check was its own or
    /// shared with the waiters that made the same one.
    @Suite struct FanOutTests {
        /// A waiting long poll and what it asked.
        struct Waiter {
            let token: String
            let query: String
            let poll: PendingRequest
        }

        /// A page's changes in one spelling (keys sorted), to compare answers.
        static func changes(_ object: [String: Any]) throws -> String {
            let data = try JSONSerialization.data(withJSONObject: object["changes"] as? [Any] ?? [], options: [.sortedKeys])
            return String(decoding: data, as: UTF8.self)
        }

        static func waiter(_ server: TestServer, _ token: String, since cursor: String, resources: String? = nil) -> Waiter {
            let query = "since=\(cursor)" + (resources.map { "&resources=\($0)" } ?? "")
            return Waiter(
                token: token, query: query,
                poll: PendingRequest(
                    port: server.port, "/v1/changes?\(query)&wait=\(longestWait)", token: token, timeout: Double(longestWait)))
        }

        /// A wait no test phase outlasts, however loaded the machine: only a
        /// wake answers a waiter, never its deadline (which, at 30 s, a loaded
        /// run once reached, and Eve's unanswered waits looked answered).
        static let longestWait = 3_600

        /// The server of these tests: waits as long as ``longestWait``.
        static func server() throws -> TestServer {
            try TestServer {
                $0.live.maxWaitersPerUser = 50
                $0.live.maxWaitSeconds = longestWait
            }
        }

        /// Each waiter's answer is a 200 whose changes equal a plain poll's by
        /// the same caller from the same cursor; `poll` gives that poll's query
        /// (by default the waiter's own, without its wait). The poll reads below
        /// the frontier of its own moment, which may sit lower than the answer's
        /// (a transaction of another database that ended between a snapshot
        /// and its look, docs/changes-feed.md): it is asked again until it
        /// reaches the answer's changes, and the test fails if it never does.
        static func expectOwnAnswers(
            _ server: TestServer, _ waiters: [Waiter], poll: (Waiter) -> String = { $0.query }
        ) throws -> [[String: Any]] {
            try waiters.map { waiter in
                let answer = try waiter.poll.response()
                #expect(answer.status == 200, "\(answer.text.prefix(300))")
                let answered = try changes(answer.object)
                var polled = ""
                let deadline = Date().addingTimeInterval(30)
                repeat {
                    let own = try server.client().request(
                        "GET", "/v1/changes?\(poll(waiter))",
                        headers: [("Authorization", "Bearer \(waiter.token)")])
                    #expect(own.status == 200)
                    polled = try changes(own.object)
                    if polled != answered { Thread.sleep(forTimeInterval: 0.1) }
                } while polled != answered && Date() < deadline
                #expect(answered == polled, "\(waiter.query)")
                return answer.object
            }
        }

        /// A second token of a user (another device).
        static func secondToken(_ server: TestServer, _ name: String) throws -> String {
            let owner = try PostgresConnection(url: server.database.ownerURL)
            defer { owner.close() }
            return try #require(try AuthService.issueToken(name: name, ttlSeconds: 3600, connection: owner)).token
        }

        @Test func oneWriteAnswersEveryWaiterWithItsOwnFeed() throws {
            let server = try Self.server()
            defer { server.stop() }
            let alice = try server.caughtUpUser("alice")
            let bob = try server.caughtUpUser("bob")
            let carol = try server.caughtUpUser("carol")
            let eve = try server.caughtUpUser("eve")
            let set = try server.makeSet(for: alice.id, title: "shared")
            try server.share(set, with: bob.id)
            try server.share(set, with: carol.id)
            _ = try server.createTerm(in: set, word: "first", token: alice.token)
            // Bob's other cursor: caught up before a write he cannot see moved the frontier.
            let bobsEarlier = FeedFollower(server: server, token: bob.token)
            try bobsEarlier.catchUp(pastXID: try server.maxXID())
            let bobEarlier = try #require(bobsEarlier.cursor)
            _ = try server.makeSet(for: eve.id, title: "eve's")
            let caughtUp = try [alice, bob, carol, eve].map { user -> String in
                let feed = FeedFollower(server: server, token: user.token)
                try feed.catchUp(pastXID: try server.maxXID())
                return feed.cursor ?? ""
            }
            #expect(bobEarlier != caughtUp[1])
            let bobsTablet = try Self.secondToken(server, "bob")
            var waiters: [Waiter] = []
            for _ in 0..<4 { waiters.append(Self.waiter(server, bob.token, since: caughtUp[1])) }
            for _ in 0..<2 { waiters.append(Self.waiter(server, bobsTablet, since: caughtUp[1])) }
            for _ in 0..<2 { waiters.append(Self.waiter(server, bob.token, since: bobEarlier)) }
            for _ in 0..<3 { waiters.append(Self.waiter(server, carol.token, since: caughtUp[2])) }
            for _ in 0..<2 { waiters.append(Self.waiter(server, carol.token, since: caughtUp[2], resources: "terms")) }
            for _ in 0..<2 { waiters.append(Self.waiter(server, alice.token, since: caughtUp[0])) }
            let eves = (0..<2).map { _ in Self.waiter(server, eve.token, since: caughtUp[3]) }
            try server.waitForWaiters(waiters.count + eves.count)
            try waitUntil("every check to name its caller", within: 30) { !server.app.live.registryHasAnonymousWaiters }
            let shared = server.app.live.sharedAnswers
            let term = try server.createTerm(in: set, word: "for everyone", token: alice.token)
            let answers = try Self.expectOwnAnswers(server, waiters)
            for answer in answers { #expect(changedIDs(answer, "terms") == [term]) }
            // Bob's four on one token and cursor made one check between them (so did others).
            #expect(server.app.live.sharedAnswers - shared >= 3)
            // Eve cannot read the set: not woken, still waiting.
            for eve in eves where eve.poll.isAnswered {
                let answer = try eve.poll.response()
                Issue.record("Eve's wait was answered: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            }
            #expect(server.app.live.waiters == eves.count)
        }

        @Test func aReaderRevokedInTheSameCommitGetsTheRevocationNotTheRow() throws {
            let server = try Self.server()
            defer { server.stop() }
            let alice = try server.user("alice")
            let set = try server.makeSet(for: alice.id, title: "shared")
            let bob = try server.user("bob")
            let frank = try server.user("frank")
            try server.share(set, with: bob.id)
            try server.share(set, with: frank.id)
            let cursors = try [bob, frank].map { user -> String in
                let feed = FeedFollower(server: server, token: user.token)
                try feed.catchUp(pastXID: try server.maxXID())
                #expect(feed.rows["study_sets/\(set)"] != nil)
                return feed.cursor ?? ""
            }
            let bobs = (0..<3).map { _ in Self.waiter(server, bob.token, since: cursors[0]) }
            let franks = (0..<3).map { _ in Self.waiter(server, frank.token, since: cursors[1]) }
            try server.waitForWaiters(bobs.count + franks.count)
            try waitUntil("every check to name its caller", within: 30) { !server.app.live.registryHasAnonymousWaiters }
            // Frank loses the set and a term is added, in one transaction.
            let term =
                try server.ownerQuery(
                    """
                    WITH revoked AS (UPDATE app.set_collaborators SET is_deleted = true WHERE set_id = $1 AND user_id = $2)
                    INSERT INTO app.terms (set_id, word, definition) VALUES ($1, 'after frank', 'd') RETURNING id
                    """, [set, frank.id]
                ).rows[0][0] ?? ""
            for answer in try Self.expectOwnAnswers(server, bobs) {
                #expect(changedIDs(answer, "terms").contains(term))
            }
            for answer in try Self.expectOwnAnswers(server, franks) {
                let entries = answer["changes"] as? [[String: Any]] ?? []
                let set = entries.first { $0["resource"] as? String == "study_sets" }?["data"] as? [String: Any]
                #expect(set?["revoked"] as? Bool == true)
                // The new term is never served to him as a row.
                for entry in entries where entry["resource"] as? String == "terms" {
                    let data = entry["data"] as? [String: Any] ?? [:]
                    #expect(data["word"] == nil)
                    #expect(data["revoked"] as? Bool ?? true)
                }
            }
        }
    }
}
