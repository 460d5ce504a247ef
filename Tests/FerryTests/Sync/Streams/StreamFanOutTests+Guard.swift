@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// Where a stream check reads its guard (``ChangesPlan/streamGuard``): beside
/// an activity check that found nothing (the empty page's own snapshot), and
/// only after the page when it found something; and from when: after the
/// cursor's xid, not at it.
extension StreamFanOutTests {
    /// A stream check's statements on the set `set` at `cursor` as `auth`'s bearer, in one
    /// batch after the prelude: the activity check with the guard beside it, then the guard alone.
    static func guardResults(_ w: SyncStreamTests.World, set: String, _ auth: [(String, String)], since cursor: String) throws
        -> (beside: PostgresResult, alone: PostgresResult)
    {
        let app = w.server.app
        let catalog = app.schema.catalog
        let scopes = try AccessScope.load(schema: "app", catalog: catalog, database: app.database)
        let paths = try ReadPath.load(schema: "app", catalog: catalog, database: app.database)
        let request = ChangesRequest(
            since: try #require(ChangeCursor(token: cursor)), limit: 500, resources: catalog.names.sorted(by: ChangeOrder.precedes),
            subscription: StreamSubscription("set:\(set)"))
        let plan = try #require(
            ChangesPlan(request: request, catalog: catalog, scopes: scopes, readPaths: paths).rooted(
                SyncStream(name: "set", scope: "sets"), id: set))
        let caller = Caller(credential: .token(hash: BearerToken.hash(Self.token(auth))), trace: RequestTrace(), transaction: nil)
        let statements = plan.prelude + [try #require(plan.guardedActivityStatement), try #require(plan.streamGuard)]
        let results = try app.database.asCaller(caller, statements)
        return (results[plan.prelude.count], results[plan.prelude.count + 1])
    }

    @Test func anEmptyChecksGuardIsReadBesideItAndAFullOnesOnlyAfterThePage() throws {
        let w = try SyncStreamTests.world()
        defer { w.server.stop() }
        let open = try SyncStreamTests.set(w, public: true, terms: 1)
        let closed = try SyncStreamTests.set(w, public: false, terms: 1)
        let other = try SyncStreamTests.set(w, public: false, terms: 0)
        func check(_ set: String, _ auth: [(String, String)], since cursor: String) throws -> (PostgresResult, PostgresResult) {
            try Self.guardResults(w, set: set, auth, since: cursor)
        }

        // Bob follows the public set, Carol the private one she may not read; both caught up.
        let bob = try w.feed("stream=set:\(open.id)", w.bob) { $0.count >= 2 }.cursor
        let carol = try w.feed("stream=set:\(closed.id)", w.carol).cursor
        // Carol becomes a member of another set: the guard names her, and nothing enters either stream.
        let member = try w.client.request("POST", "/v1/members", headers: w.alice, json: ["set_id": other.id, "user_id": w.carolID])
        try #require(member.status == 201, "\(member.text)")
        _ = try w.feed("", w.carol) { entries in entries.contains { $0.1 == other.id } }

        for (set, auth, cursor, readable) in [(open.id, w.bob, bob, true), (closed.id, w.carol, carol, false)] {
            let (beside, alone) = try check(set, auth, since: cursor)
            let activity = try FeedActivity(beside)
            #expect(!activity.found)
            let besides = try StreamGuard(beside)
            let after = try StreamGuard(alone)
            #expect(besides.readable == readable && after.readable == readable)
            #expect(besides.unchanged && after.unchanged)
            #expect(besides.users.contains(w.carolID) && after.users == besides.users, "\(besides.users) \(after.users)")
            // The empty page's snapshot is the check's: so is the guard's frontier.
            #expect(besides.frontier == activity.frontier && after.frontier >= activity.frontier)
        }

        // A term in the public set: Bob's check finds it, and reads no guard beside it.
        let term = try SyncStreamTests.term(w, in: open.id, word: "found")
        _ = try w.feed("stream=set:\(open.id)", since: bob, w.bob) { entries in entries.contains { $0.1 == term } }
        let (beside, alone) = try check(open.id, w.bob, since: bob)
        #expect(try FeedActivity(beside).found)
        let row = try ChangesPage.firstRow(beside)
        #expect(["readable", "root_changed", "public_changed", "users"].allSatisfy { row[$0] == nil })
        #expect(try StreamGuard(alone).readable)
    }

    /// A cursor that stops at the root's own last change still shares the
    /// next commit's check. When nothing commits after a write of the root
    /// row (the set made public, renamed), its readers' cursor is that write's
    /// stamp; the guard reads the root row and its public grants after it, as
    /// the page does. Read at it, the guard named that write, and every reader
    /// made a check of their own at the next commit: no page was ever taken.
    @Test func aCursorAtTheRootsOwnChangeStillShares() throws {
        let w = try SyncStreamTests.world { $0.live.maxWaitSeconds = ChangesSuites.FanOutTests.longestWait }
        defer { w.server.stop() }
        // Private at first: round 1 makes it public (its row and its public grant at one stamp), later rounds rename it.
        let set = try SyncStreamTests.set(w, public: false, terms: 1)
        let readers = try Self.users(w, ["dora", "ezra", "fay", "gus", "hal", "ivy"])
        let stream = "set:\(set.id)"
        var taken = 0
        var rounds = 0
        // Sharing is scheduling (a reader that resumes while no check is on offer makes its
        // own): rounds go on until two pages were taken, at most five.
        while taken < 2 && rounds < 5 {
            rounds += 1
            let change: [String: Any] = rounds == 1 ? ["is_public": true] : ["title": "round \(rounds)"]
            let patched = try w.client.request("PATCH", "/v1/sets/\(set.id)", headers: w.alice + [("If-Match", "*")], json: change)
            try #require(patched.status == 200, "\(patched.text)")
            // The cursor its readers hold when nothing committed after the write: the write's
            // stamp, once below the frontier (every transaction up to it has ended).
            let stamp = try #require(
                try w.server.ownerQuery("SELECT _ferry_xid::text FROM app.sets WHERE id = $1::uuid", [set.id]).rows[0][0].flatMap { UInt64($0) })
            try waitUntil("the write below the frontier", within: 30) {
                try w.server.ownerQuery("SELECT $1::xid8 < ferry.feed_frontier()", [String(stamp)]).rows[0][0] == "t"
            }
            let cursor = ChangeCursor(afterXID: stamp).token
            if rounds == 1 {
                // Each column alone: nothing changed after the stamp; from the xid before it, both did.
                let dora = [("Authorization", "Bearer \(readers[0].token)")]
                for (since, changed) in [(stamp, false), (stamp - 1, true)] {
                    let row = try ChangesPage.firstRow(
                        Self.guardResults(w, set: set.id, dora, since: ChangeCursor(afterXID: since).token).alone)
                    #expect(try row.bool("root_changed") == changed, "from \(since), the write at \(stamp)")
                    #expect(try row.bool("public_changed") == changed, "from \(since), the write at \(stamp)")
                    #expect(try row.bool("readable") == true)
                }
            }
            let waiters = readers.map { Self.waiter(w, $0.token, stream: stream, since: cursor) }
            try w.server.waitForWaiters(waiters.count)
            try waitUntil("every check to name its caller", within: 30) { !w.server.app.live.registryHasAnonymousWaiters }
            let before = w.server.app.live.sharedAnswers
            let term = try SyncStreamTests.term(w, in: set.id, word: "round \(rounds)")
            // Each answer is its reader's own poll from the cursor: the term, and not the write at the cursor.
            for answer in try Self.expectOwnAnswers(w, waiters) {
                #expect(changedIDs(answer, "terms") == [term])
                #expect(changedIDs(answer, "sets").isEmpty)
            }
            taken += w.server.app.live.sharedAnswers - before
        }
        #expect(taken >= 2, "shared \(taken) in \(rounds) commits")
    }
}
