import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// A row's history says `delivered` (docs/API.md, console) exactly when the
/// row's last change is below the feed's frontier: when a device's poll now
/// serves it. Compared with alice's own polls in four states. Before it
/// compared with `pg_snapshot_xmin`, the cluster's oldest running xid: a
/// session idle after a write to an unsynced table kept every row
/// "undelivered" while devices had it, and this test failed at its first check.
@Suite struct ConsoleDeliveredTests {
    @Test func deliveredIsWhatAPollServes() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let server = fixture.server
        _ = try server.ownerQuery("CREATE TABLE public.unsynced (a int)")
        let alice = try server.user("alice")
        let set = try server.makeSet(for: alice.id)
        let feed = FeedFollower(server: server, token: alice.token)
        try feed.catchUp(pastXID: try server.maxXID())
        func delivered(_ term: String) throws -> Bool? {
            let history = try fixture.console("GET", "/resources/terms/rows/\(term)").object["history"] as? [String: Any]
            return history?["delivered"] as? Bool
        }
        func received(_ term: String) throws -> Bool {
            try feed.poll()
            return feed.rows["terms/\(term)"] != nil
        }
        var sessions: [PostgresConnection] = []
        defer { for s in sessions { try? s.execute("ROLLBACK"); s.close() } }
        func session(_ statements: [String]) throws -> PostgresConnection {
            let s = try server.database.connect()
            sessions.append(s)
            for statement in statements { _ = try s.query(statement) }
            return s
        }

        // 1. Older than the term, idle after a write to an unsynced table: holds
        //    pg_snapshot_xmin, not the feed. Delivered.
        _ = try session(["BEGIN", "INSERT INTO public.unsynced VALUES (1)"])
        let first = try server.createTerm(in: set, word: "uno", token: alice.token)
        try waitUntil("alice to get the first term") { try received(first) }
        #expect(try delivered(first) == true)

        // 2. Older than the term, a synced write still open: holds the feed. Not
        //    delivered, and alice does not get it, until it ends.
        let writer = try session(["BEGIN", "UPDATE app.study_sets SET title = 'held' WHERE id = '\(set)'"])
        let second = try server.createTerm(in: set, word: "dos", token: alice.token)
        #expect(try received(second) == false)
        #expect(try delivered(second) == false)
        try writer.execute("ROLLBACK")
        try waitUntil("alice to get the second term") { try received(second) }
        #expect(try delivered(second) == true)

        // 3. The fall-back: while another session holds the floor's raiser lock,
        //    no computation can raise the floor, and a transaction alive and
        //    advertising nothing (its xid taken after the last raise) holds the
        //    frontier at its xid, the console's and the devices' alike.
        let blocker = try session(["SELECT pg_advisory_lock(1181905530, 0)"])
        _ = try session(["BEGIN", "INSERT INTO public.unsynced VALUES (2)"])
        let third = try server.createTerm(in: set, word: "tres", token: alice.token)
        #expect(try received(third) == false)
        #expect(try delivered(third) == false)

        // 4. The floor rises again: delivered, and alice gets it.
        _ = try blocker.query("SELECT pg_advisory_unlock(1181905530, 0)")
        try waitUntil("alice to get the third term") { try received(third) }
        #expect(try delivered(third) == true)
    }
}
