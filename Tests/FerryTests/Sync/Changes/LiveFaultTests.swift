import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// The live feed's faults: PostgreSQL restarting under waiters, the LISTEN
/// connection killed, and a schema change announced by a migration's NOTIFY.
@Suite struct LiveFaultTests {
    /// A user with a set of her own, once the listener listens, holding a long poll from now.
    static func waitingUser(_ server: TestServer) throws -> (user: (id: String, token: String), set: String, poll: PendingRequest) {
        let alice = try server.user("alice")
        let set = try server.makeSet(for: alice.id)
        try waitUntil("the listener to listen", within: 30) { server.app.live.isListening }
        // Past the set: a cursor from since=now may be below it while other transactions run.
        let feed = FeedFollower(server: server, token: alice.token)
        try feed.catchUp(pastXID: try server.maxXID())
        let checks = server.app.live.checks
        let poll = PendingRequest(port: server.port, "/v1/changes?since=\(feed.cursor ?? "")&wait=60", token: alice.token)
        try server.waitForWaiters(1)
        // Its first check done: from now on it waits, and a fault meets a waiter, not a poll.
        try waitUntil("the waiter's first check", within: 30) { server.app.live.checks > checks }
        return (alice, set, poll)
    }

    @Test func aPostgreSQLRestartWhileWaitersWaitMissesNothing() throws {
        let isolated = try PrivateClusterServer {
            $0.database.acquireTimeoutMs = 500
            $0.live.fallbackCheckSeconds = 0.2
        }
        defer { isolated.stop() }
        let (cluster, server) = (isolated.cluster, isolated.server)
        let (alice, set, poll) = try Self.waitingUser(server)

        try cluster.restart()
        // The waiter waits on through the outage (its fallback checks fail and are retried) ...
        try waitUntil("the listener to come back", within: 30) {
            server.app.live.isListening && server.app.live.listenerConnections >= 2
        }
        #expect(!poll.isAnswered)
        #expect(server.app.live.waiters == 1)
        // ... and a commit after the restart reaches it.
        let term = try server.createTerm(in: set, word: "after the restart", token: alice.token)
        let response = try poll.response()
        #expect(response.status == 200)
        #expect(ChangesSuites.LongPollTests.ids(response, "terms") == [term])
    }

    @Test func aKilledListenerReconnectsAndWaitersStillWake() throws {
        let server = try TestServer { $0.live.fallbackCheckSeconds = 0.2 }
        defer { server.stop() }
        let (alice, set, poll) = try Self.waitingUser(server)
        let killed = try server.ownerQuery(
            """
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'ferry-listen'
            """)
        #expect(killed.rows.first?[0] == "1")
        // Written while nobody listens: no hint is heard, the fallback checks and the
        // wake-everyone after reconnecting find it.
        let term = try server.createTerm(in: set, word: "unheard", token: alice.token)
        let response = try poll.response()
        #expect(ChangesSuites.LongPollTests.ids(response, "terms") == [term])
        try waitUntil("the listener to come back", within: 30) {
            server.app.live.isListening && server.app.live.listenerConnections >= 2
        }
    }

    @Test func aMigrationsNotifyReloadsTheSchemaWithoutASignal() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        try waitUntil("the listener to listen", within: 30) { server.app.live.isListening }
        let auth = [("Authorization", "Bearer \(alice.token)")]
        #expect(try server.client().request("GET", "/v1/live_notes", headers: auth).status == 404)
        // What `ferry migrate` runs after a file: ferry.refresh_sync_triggers() announces the change.
        let owner = try PostgresConnection(url: server.database.ownerURL)
        defer { owner.close() }
        try owner.execute(
            """
            CREATE TABLE app.live_notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), body text NOT NULL DEFAULT '');
            SELECT ferry.enable_sync('app.live_notes');
            GRANT SELECT, INSERT (id, body), UPDATE (body, is_deleted) ON app.live_notes TO ferry_app;
            SELECT ferry.refresh_sync_triggers();
            """)
        try waitUntil("the new table to be served", within: 30) {
            try server.client().request("GET", "/v1/live_notes", headers: auth).status == 200
        }
    }
}
