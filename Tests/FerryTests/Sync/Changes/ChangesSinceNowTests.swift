import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// `since=now`: the cursor of this moment and no changes, for a client that
    /// fills its store from Index pages and then follows the feed from there.
    @Suite struct SinceNowTests {
        @Test func nowGivesACursorAfterEverythingAlreadyCommitted() throws {
            let server = try TestServer()
            defer { server.stop() }
            let me = try server.user("now")
            let old = try server.makeSet(for: me.id, title: "before")
            _ = try server.makeTerms(in: old, count: 3)
            let client = server.client()
            let auth = ("Authorization", "Bearer \(me.token)")
            let now = try client.request("GET", "/v1/changes?since=now", headers: [auth])
            #expect(now.status == 200, "\(now.text)")
            #expect((now.object["changes"] as? [Any])?.isEmpty == true)
            #expect(now.object["has_more"] as? Bool == false)
            let cursor = try #require(now.object["cursor"] as? String)
            #expect(now.header("ETag") == "\"\(cursor)\"")

            // The cursor is a real one: the feed and its cheap check accept it.
            let check = try client.request("GET", "/v1/changes?since=\(cursor)", headers: [auth, ("If-None-Match", "\"\(cursor)\"")])
            #expect([200, 304].contains(check.status), "\(check.status) \(check.text)")

            // What is written after it arrives. (A row committed just before may come
            // again too, when a transaction older than it was still running: the
            // cursor is the frontier; the contract lets a row come twice.)
            let new = try server.makeSet(for: me.id, title: "after")
            let follow = FeedFollower(server: server, token: me.token)
            follow.cursor = cursor
            try follow.catchUp(pastXID: try server.maxXID())
            #expect(follow.rows(of: "study_sets").keys.contains(new))

            // Without since, the same user's feed starts from the beginning.
            let full = FeedFollower(server: server, token: me.token)
            try full.catchUp(pastXID: try server.maxXID())
            #expect(Set(full.rows(of: "study_sets").keys) == [old, new])
        }
    }
}
