@testable import Ferry
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// Where a stream check reads its guard (``ChangesPlan/streamGuard``): beside
/// an activity check that found nothing (the empty page's own snapshot), and
/// only after the page when it found something.
extension StreamFanOutTests {
    @Test func anEmptyChecksGuardIsReadBesideItAndAFullOnesOnlyAfterThePage() throws {
        let w = try SyncStreamTests.world()
        defer { w.server.stop() }
        let open = try SyncStreamTests.set(w, public: true, terms: 1)
        let closed = try SyncStreamTests.set(w, public: false, terms: 1)
        let other = try SyncStreamTests.set(w, public: false, terms: 0)
        let app = w.server.app
        let catalog = app.schema.catalog
        let scopes = try AccessScope.load(schema: "app", catalog: catalog, database: app.database)
        let paths = try ReadPath.load(schema: "app", catalog: catalog, database: app.database)
        let resources = catalog.names.sorted(by: ChangeOrder.precedes)
        // A stream check's statements at `cursor` as `auth`'s bearer, in one batch after the
        // prelude: the activity check with the guard beside it, then the guard alone.
        func check(_ set: String, _ auth: [(String, String)], since cursor: String) throws -> (PostgresResult, PostgresResult) {
            let request = ChangesRequest(
                since: try #require(ChangeCursor(token: cursor)), limit: 500, resources: resources,
                subscription: StreamSubscription("set:\(set)"))
            let plan = try #require(
                ChangesPlan(request: request, catalog: catalog, scopes: scopes, readPaths: paths).rooted(
                    SyncStream(name: "set", scope: "sets"), id: set))
            let caller = Caller(credential: .token(hash: BearerToken.hash(Self.token(auth))), trace: RequestTrace(), transaction: nil)
            let statements = plan.prelude + [try #require(plan.guardedActivityStatement), try #require(plan.streamGuard)]
            let results = try app.database.asCaller(caller, statements)
            return (results[plan.prelude.count], results[plan.prelude.count + 1])
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
}
