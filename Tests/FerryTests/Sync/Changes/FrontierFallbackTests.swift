import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// A frontier lower than one handed out before (docs/changes-feed.md, "A
    /// frontier that falls back"): the device keeps its cursor, is never sent
    /// back, and misses nothing.
    @Suite struct FrontierFallbackTests {
        /// The common way down: a transaction alive and advertising nothing is
        /// passed by the frontier (alice's cursor ends past its xid), then writes
        /// a synced row. Its stamp is above her cursor, but the frontier now stops
        /// at its xid, below the cursor. Her next poll keeps her cursor (with
        /// `ChangesPage.frontierCursor` moving it to the frontier, this test fails
        /// on the kept cursor), and once it commits she gets its row, and the
        /// newer one it held back.
        @Test func aFrontierBelowTheCursorKeepsItAndMissesNothing() throws {
            let server = try TestServer()
            defer { server.stop() }
            let (alice, set, old) = try server.unsyncedTableAndAlicesTerm()
            let slow = try server.database.connect()
            defer { slow.close() }
            try slow.execute("BEGIN")
            try slow.execute("INSERT INTO public.unsynced VALUES (1)")
            let slowXID = try #require(try slow.query("SELECT pg_current_xact_id()::text").first?.uint64(0))
            // A commit after its xid: a snapshot's xmax passes only completed xids.
            _ = try server.makeSet(for: alice.id)
            let feed = FeedFollower(server: server, token: alice.token)
            try feed.catchUp(pastXID: slowXID)
            let handedOut = try #require(feed.cursor)
            let passed = try #require(feed.position)
            #expect(passed.afterXID >= slowXID)

            _ = try slow.query("UPDATE app.terms SET word = 'late' WHERE id = $1", [old])
            let stamp = try #require(try slow.query("SELECT _ferry_xid::text FROM app.terms WHERE id = $1", [old]).first?.uint64(0))
            #expect(stamp > passed.afterXID, "the late row lands after the cursor handed out")
            let newer = try server.createTerm(in: set, word: "newer", token: alice.token)
            let frontier = try #require(try server.ownerQuery("SELECT ferry.feed_frontier()::text").first?.uint64(0))
            #expect(frontier <= passed.afterXID, "the frontier fell back below the cursor")

            let (page, _) = try feed.poll()
            #expect((page.object["changes"] as? [[String: Any]])?.isEmpty == true)
            #expect(feed.cursor == handedOut, "the cursor is kept, not moved back to the frontier")

            try slow.execute("COMMIT")
            try waitUntil("the late row and the newer one after the kept cursor", within: 30) {
                try feed.poll()
                return feed.rows["terms/\(old)"]?["word"] as? String == "late" && feed.rows["terms/\(newer)"] != nil
            }
            #expect((feed.position?.afterXID ?? 0) >= stamp)
        }
    }
}
