import FerryPostgres
import FerryTestSupport
import Foundation
import Synchronization
import Testing

extension Resources {
    /// A single PATCH that has to wait for another writer's row lock must
    /// decide on the row as that writer left it: keep the other fields'
    /// new values, and see a deletion. The fast path for PATCH is one UPDATE,
    /// so this relies on PostgreSQL re-checking it against the newest row.
    @Suite struct ConcurrentPatchTests {
        @Test func aWaitingPatchKeepsTheOtherWritersFields() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet("T", description: "D")
            let response = try patchWhileHeld(me, set: set.id, held: "UPDATE app.study_sets SET title = 'theirs' WHERE id = $1",
                                              json: ["description": "mine"], headers: [("If-Match", "*")])
            #expect(response.status == 200, "\(response.text)")
            #expect(response.object["title"] as? String == "theirs", "the other writer's field survives")
            #expect(response.object["description"] as? String == "mine")
            #expect(response.object.revision == 3)
            let stored = try me.call("GET", "/v1/study_sets/\(set.id)").object
            #expect(stored["title"] as? String == "theirs")
            #expect(stored["description"] as? String == "mine")
        }

        @Test func aWaitingPatchSeesTheRowDeleted() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet()
            let response = try patchWhileHeld(me, set: set.id, held: "UPDATE app.study_sets SET is_deleted = true WHERE id = $1",
                                              json: ["title": "late"], headers: [("If-Match", "*")])
            #expect(response.status == 410, "\(response.text)")
            #expect(response.code == "gone")
        }

        @Test func aWaitingPatchSeesTheRevisionMoveOn() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet()
            let response = try patchWhileHeld(me, set: set.id, held: "UPDATE app.study_sets SET title = 'theirs' WHERE id = $1",
                                              json: ["title": "mine"], headers: [("If-Match", "\"1\"")])
            #expect(response.status == 412, "\(response.text)")
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").object["title"] as? String == "theirs")
        }

        /// Runs `held` in an owner transaction, sends the PATCH, waits until its
        /// backend is blocked on the row lock, commits, and returns the answer.
        private func patchWhileHeld(
            _ me: API, set: String, held: String, json: [String: Any], headers: [(String, String)]
        ) throws -> TestHTTPClient.Response {
            let owner = try PostgresConnection(url: me.server.database.ownerURL)
            defer { owner.close() }
            try owner.execute("BEGIN")
            _ = try owner.query(held, [set])
            let answer = Mutex<Result<TestHTTPClient.Response, any Error>?>(nil)
            let (server, token, userID) = (me.server, me.token, me.userID)
            let body = try JSONSerialization.data(withJSONObject: json)
            let thread = Thread {
                let client = API(client: server.client(), token: token, userID: userID, server: server)
                let result = Result { try client.call("PATCH", "/v1/study_sets/\(set)", body: Array(body), headers: headers) }
                answer.withLock { $0 = result }
            }
            thread.start()
            // Commit only once the PATCH is really waiting, so the test exercises the re-check.
            let deadline = Date().addingTimeInterval(20)
            var waiting = false
            while !waiting, Date() < deadline {
                let rows = try owner.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))")
                waiting = rows.first?[0] != "0"
                if !waiting { Thread.sleep(forTimeInterval: 0.02) }
            }
            #expect(waiting, "the PATCH never waited for the row lock")
            try owner.execute("COMMIT")
            while answer.withLock({ $0 == nil }), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            guard let result = answer.withLock({ $0 }) else { throw TimedOut() }
            return try result.get()
        }

        private struct TimedOut: Error {}
    }
}
