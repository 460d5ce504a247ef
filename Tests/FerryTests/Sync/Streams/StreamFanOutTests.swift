@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// One commit to a stream that the waiters of many users follow (issue 46,
/// "One query per change, whatever the number of readers"): the waiters take
/// one check's page between them (``StreamChecks``), and each answer is
/// exactly what its own poll from its own cursor gives, over the wire.
@Suite struct StreamFanOutTests {
    typealias Waiter = ChangesSuites.FanOutTests.Waiter

    /// A long poll on `stream`, waiting as long as ``ChangesSuites/FanOutTests/longestWait``.
    static func waiter(_ w: SyncStreamTests.World, _ token: String, stream: String, since cursor: String) -> Waiter {
        let query = "stream=\(stream)&since=\(cursor)"
        return Waiter(
            token: token, query: query,
            poll: PendingRequest(
                port: w.server.port, "/v1/changes?\(query)&wait=\(ChangesSuites.FanOutTests.longestWait)", token: token,
                timeout: Double(ChangesSuites.FanOutTests.longestWait)))
    }

    /// Each waiter's answer is its own poll's (``ChangesSuites/FanOutTests/expectOwnAnswers(_:_:poll:)``).
    /// The poll says `wait=0`: a plain poll of a public stream is read as no
    /// user (everyone's page, for shared caches), which leaves out the
    /// caller's own grant.
    static func expectOwnAnswers(_ w: SyncStreamTests.World, _ waiters: [Waiter]) throws -> [[String: Any]] {
        try ChangesSuites.FanOutTests.expectOwnAnswers(w.server, waiters) { "\($0.query)&wait=0" }
    }

    /// New users and a token each.
    static func users(_ w: SyncStreamTests.World, _ names: [String]) throws -> [(id: String, token: String)] {
        let owner = try w.server.database.connect()
        defer { owner.close() }
        return try names.map { name in
            let id = try owner.query("SELECT ferry.create_user($1, $1 || '-password-1')::text", [name]).first?[0] ?? ""
            return (id, try #require(try AuthService.issueToken(name: name, ttlSeconds: 600, connection: owner)).token)
        }
    }

    static func token(_ auth: [(String, String)]) -> String {
        String(auth[0].1.dropFirst("Bearer ".count))
    }

    @Test func subscribersOfAPublicSetShareOneCheckAndEachGetsItsOwnPage() throws {
        let w = try SyncStreamTests.world { $0.live.maxWaitSeconds = ChangesSuites.FanOutTests.longestWait }
        defer { w.server.stop() }
        let open = try SyncStreamTests.set(w, public: true, terms: 2)
        let closed = try SyncStreamTests.set(w, public: false, terms: 1)
        let readers = try Self.users(w, ["dora", "ezra", "fay", "gus", "hal", "ivy", "kim", "lou", "max", "ned", "jan"])
        let stream = "set:\(open.id)"
        // Two cursors: three readers caught up before a write none of them
        // reads moved the frontier, three after it.
        var cursors: [String] = []
        for (index, reader) in readers.enumerated() {
            if index == 5 { _ = try SyncStreamTests.set(w, public: false, terms: 0) }
            let auth = [("Authorization", "Bearer \(reader.token)")]
            let caughtUp = try w.feed("stream=\(stream)", auth) { $0.count >= 3 }
            #expect(caughtUp.entries.count == 3)
            cursors.append(caughtUp.cursor)
        }
        #expect(cursors[0] != cursors[9])
        // Bob becomes a member in the very commit that adds the term: his page
        // holds his grant's rows, so it is his own.
        let bobCursor = try w.feed("stream=\(stream)", w.bob) { $0.count >= 3 }.cursor
        // Carol follows Alice's private set, which she may not read; Alice follows it too.
        let carolCursor = try w.feed("stream=set:\(closed.id)", w.carol).cursor
        let aliceCursor = try w.feed("stream=set:\(closed.id)", w.alice) { $0.count >= 2 }.cursor

        // One waiter a reader: any page taken is another user's.
        var waiters = readers.dropLast().enumerated().map { index, reader in
            Self.waiter(w, reader.token, stream: stream, since: cursors[index])
        }
        // Jan signs out (his token revoked by hand: no instance is told) while he waits.
        let jans = (0..<2).map { _ in Self.waiter(w, readers[10].token, stream: stream, since: cursors[10]) }
        let bob = Self.waiter(w, Self.token(w.bob), stream: stream, since: bobCursor)
        waiters.append(bob)
        let carols = (0..<2).map { _ in Self.waiter(w, Self.token(w.carol), stream: "set:\(closed.id)", since: carolCursor) }
        try w.server.waitForWaiters(waiters.count + jans.count + carols.count)
        try waitUntil("every check to name its caller", within: 30) { !w.server.app.live.registryHasAnonymousWaiters }
        _ = try w.server.ownerQuery("UPDATE ferry.tokens SET revoked = true WHERE user_id = $1", [readers[10].id])
        // Past the token cache's second: every waiter's token must be looked up again before it takes a page.
        Thread.sleep(forTimeInterval: 1.2)
        let shared = w.server.app.live.sharedAnswers
        let checks = w.server.app.live.checks
        let bobID = try w.server.database.column("SELECT id::text FROM ferry.users WHERE name = 'bob'")[0]
        let term =
            try w.server.ownerQuery(
                """
                WITH joined AS (INSERT INTO app.members (set_id, user_id) VALUES ($1, $2))
                INSERT INTO app.terms (set_id, word) VALUES ($1, 'for every reader') RETURNING id::text
                """, [open.id, bobID]
            ).rows[0][0] ?? ""
        let answers = try Self.expectOwnAnswers(w, waiters)
        for answer in answers.dropLast() { #expect(changedIDs(answer, "terms") == [term]) }
        // Bob's grant brought the set's rows into his stream again: his answer is his own.
        #expect(changedIDs(answers.last ?? [:], "terms") == Set(open.terms + [term]))
        // Jan's token is no longer live: his waiters are refused, never served another's page.
        for jan in jans { #expect(try jan.poll.response().status == 401) }
        // Ten readers at two cursors: a check per cursor, the others took one.
        // How many did is scheduling: a reader who resumes while no check is on
        // offer makes another, and on a loaded machine a token's cached check
        // can lapse between the lookup and its use. So the readers wait again
        // from their answers' cursors and another term is written, until four
        // pages were taken in all (at most five commits); with no sharing, none is.
        var taken = w.server.app.live.sharedAnswers - shared
        var rounds = 1
        var readerAnswers = Array(answers.dropLast())
        while taken < 4 && rounds < 5 {
            rounds += 1
            let again = readers.dropLast().enumerated().map { index, reader in
                Self.waiter(w, reader.token, stream: stream, since: readerAnswers[index]["cursor"] as? String ?? "")
            }
            try w.server.waitForWaiters(again.count + carols.count)
            try waitUntil("every check to name its caller", within: 30) { !w.server.app.live.registryHasAnonymousWaiters }
            let before = w.server.app.live.sharedAnswers
            let next = try SyncStreamTests.term(w, in: open.id, word: "round \(rounds)")
            readerAnswers = try Self.expectOwnAnswers(w, again)
            for answer in readerAnswers { #expect(changedIDs(answer, "terms") == [next]) }
            taken += w.server.app.live.sharedAnswers - before
        }
        #expect(taken >= 4, "shared \(taken) in \(rounds) commits, checks \(w.server.app.live.checks - checks)")
        // Carol may not read the private set: nothing of it woke her, nor reached her.
        #expect(carols.allSatisfy { !$0.poll.isAnswered })

        // A write to the private set: Alice's waiter gets it, Carol's stay asleep
        // (her own checks read nothing, and never take Alice's page).
        let alices = (0..<2).map { _ in Self.waiter(w, Self.token(w.alice), stream: "set:\(closed.id)", since: aliceCursor) }
        try w.server.waitForWaiters(alices.count + carols.count)
        let secret = try SyncStreamTests.term(w, in: closed.id, word: "secret")
        for answer in try Self.expectOwnAnswers(w, alices) {
            #expect(changedIDs(answer, "terms").contains(secret))
        }
        try waitUntil("Carol's waiters to park again", within: 30) { w.server.app.live.checksRunning == 0 && w.server.app.live.waiters == 2 }
        #expect(carols.allSatisfy { !$0.poll.isAnswered })
        let carolNow = try w.client.request("GET", "/v1/changes?stream=set:\(closed.id)&since=\(carolCursor)", headers: w.carol)
        #expect((carolNow.object["changes"] as? [Any])?.isEmpty == true, "\(carolNow.text.prefix(300))")
    }

    @Test func aPageIsCutForALaterCursorOnlyWhenComplete() throws {
        // The cut of ``SharedStreamPage``: entries after the later cursor, in order, spelled as they came.
        let text =
            #"[{"resource" : "terms", "data" : {"id":"a","word":"x, ]}"}}, {"resource":"terms","data":{"id":"b"}}, {"resource":"sets","data":{"id":"c","n":[1,2]}}]"#
        let elements = try #require(SharedStreamPage.arrayElements(text))
        #expect(elements.count == 3)
        #expect(elements[0].hasPrefix(#"{"resource" : "terms""#) && elements[0].hasSuffix(#""x, ]}"}}"#))
        #expect(elements[2] == #"{"resource":"sets","data":{"id":"c","n":[1,2]}}"#)
        #expect(SharedStreamPage.arrayElements("[]")?.isEmpty == true)
        #expect(SharedStreamPage.arrayElements("{}") == nil)
        #expect(SharedStreamPage.arrayElements("[1, 2") == nil)
        #expect(SharedStreamPage.arrayElements("[1] x") == nil)
    }
}
