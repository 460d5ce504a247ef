@testable import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// A cursor past the database's next transaction id came from before a
    /// restore to an older point (or from another database). The feed answers
    /// it 410 `cursor_expired`, as an expired one, so that the device starts
    /// over; before, it answered empty pages until new commits passed the
    /// cursor, and the device never learnt that its rows were gone.
    @Suite struct CursorAheadTests {
        @Test func aCursorAheadOfTheDatabaseIs410OnEveryPathToTheFeed() throws {
            let server = try TestServer()
            defer { server.stop() }
            let kim = try server.user("kim")
            let set = try server.makeSet(for: kim.id)
            let terms = try server.makeTerms(in: set, count: 2)
            let feed = FeedFollower(server: server, token: kim.token)
            try feed.catchUp(pastXID: try server.maxXID())
            let given = try #require(feed.position)
            let auth = ("Authorization", "Bearer \(kim.token)")
            let client = server.client()

            // The cursors this database gave out are served.
            let served = try client.request("GET", "/v1/changes?since=\(given.token)", headers: [auth])
            #expect(served.status == 200, "\(served.text)")
            let next = UInt64(try server.ownerQuery("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").rows[0][0] ?? "0") ?? 0
            #expect(next > given.afterXID)

            let far = next + 1_000_000
            let cursors = [
                ("a frontier cursor", ChangeCursor(afterXID: far)),
                ("a download's position, its base ahead", ChangeCursor(afterXID: given.afterXID, position: ("terms", terms[0]), base: far)),
            ]
            for (kind, cursor) in cursors {
                let token = cursor.token
                let requests: [(String, String, [(String, String)])] = [
                    ("a poll", "/v1/changes?since=\(token)", [auth]),
                    ("an activity check", "/v1/changes?since=\(token)", [auth, ("If-None-Match", "\"\(token)\"")]),
                    ("a long poll", "/v1/changes?since=\(token)&wait=20", [auth]),
                    ("an event stream", "/v1/changes?since=\(token)&wait=20", [auth, ("Accept", "text/event-stream")]),
                    ("a subscription's poll", "/v1/changes?since=\(token)&stream=set:\(set)", [auth]),
                    ("a subscription's long poll", "/v1/changes?since=\(token)&stream=set:\(set)&wait=20", [auth]),
                ]
                for (label, path, headers) in requests {
                    let began = Date()
                    let response = try client.request("GET", path, headers: headers)
                    #expect(response.status == 410, "\(kind), \(label): \(response.status) \(response.text)")
                    #expect(response.header("Content-Type") == "application/problem+json", "\(kind), \(label)")
                    #expect(response.object["code"] as? String == "cursor_expired", "\(kind), \(label)")
                    let detail = response.object["detail"] as? String ?? ""
                    #expect(detail.contains("ahead of this database"), "\(kind), \(label): \(detail)")
                    // Answered, not waited out.
                    #expect(Date().timeIntervalSince(began) < 15, "\(kind), \(label)")
                }
                // One wait for several streams reports it changed, so that its GET meets the 410.
                let wait = try client.request(
                    "POST", "/v1/changes/wait", headers: [auth],
                    json: ["wait": 20, "since": ["default": given.token, "set:\(set)": token]])
                #expect(wait.status == 200, "\(kind): \(wait.text)")
                #expect(wait.object["changed"] as? [String] == ["set:\(set)"], "\(kind): \(wait.text)")
            }
        }

        /// The operator's case: the database restored to a point before some of
        /// the devices' cursors. Each such device gets 410 and starts over, and
        /// its full sync brings the rows as they were at the backup.
        @Test func aRestoreToAnOlderPointSendsTheDevicesBackToAFullSync() throws {
            let isolated = try PrivateClusterServer()
            defer { isolated.stop() }
            let (cluster, server) = (isolated.cluster, isolated.server)
            let kim = try server.user("kim")
            let set = try server.makeSet(for: kim.id)
            let kept = try server.makeTerms(in: set, count: 3)

            // A cold backup, then more writes: the device's cursor passes the backup.
            try cluster.stop()
            try cluster.backUp(as: "backup")
            try cluster.start()
            let auth = ("Authorization", "Bearer \(kim.token)")
            let client = server.client()
            try waitUntil("Ferry to serve again after the backup", within: 60) {
                (try? client.request("GET", "/v1/auth/me", headers: [auth]))?.status == 200
            }
            var lost: [String] = []
            for _ in 0..<20 { lost += try server.makeTerms(in: set, count: 1) }
            // Transactions of other work, so that the restored database, which goes on from the
            // backup's next xid, stays behind the cursor while the test asks (a token's use, a hint).
            _ = try server.ownerQuery("DO $$ BEGIN FOR i IN 1..200 LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$")
            let feed = FeedFollower(server: server, token: kim.token)
            try feed.catchUp(pastXID: try server.maxXID())
            #expect(Set(feed.rows(of: "terms").keys) == Set(kept + lost))
            let cursor = try #require(feed.cursor)

            // The restore: the database, its transaction ids included, as at the backup.
            try cluster.stop()
            try cluster.restore("backup")
            try cluster.start()
            var answer: TestHTTPClient.Response?
            try waitUntil("the feed to answer after the restore", within: 60) {
                answer = try? client.request("GET", "/v1/changes?since=\(cursor)", headers: [auth])
                return answer.map { $0.status != 503 } ?? false
            }
            #expect(answer?.status == 410, "\(answer?.status ?? 0) \(answer?.text ?? "")")
            #expect(answer?.object["code"] as? String == "cursor_expired")

            // The full sync the 410 asks for: the rows of the backup, and none written after it.
            let fresh = FeedFollower(server: server, token: kim.token)
            try fresh.catchUp(pastXID: try server.maxXID())
            #expect(Set(fresh.rows(of: "terms").keys) == Set(kept))
        }
    }
}
