import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Synchronization
import Testing

extension Resources {
    /// A single PATCH or PUT that has to wait for another writer's row lock
    /// must decide on the row as that writer left it: keep the other fields'
    /// new values (PATCH), see a deletion, and see its base revision go
    /// stale. The fast path for both is one UPDATE, so this relies on
    /// PostgreSQL re-checking it against the newest row.
    ///
    /// Serialized: each test parks a request on a row lock, holding one of the
    /// shared server's four pool connections until it sees the request wait;
    /// side by side, the suite alone could hold all four.
    @Suite(.serialized) struct ConcurrentUpdateTests {
        @Test func aWaitingPatchKeepsTheOtherWritersFields() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet("T", description: "D")
            let response = try patchWhileHeld(
                me, set: set.id, held: "UPDATE app.study_sets SET title = 'theirs' WHERE id = $1",
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
            let response = try patchWhileHeld(
                me, set: set.id, held: "UPDATE app.study_sets SET is_deleted = true WHERE id = $1",
                json: ["title": "late"], headers: [("If-Match", "*")])
            #expect(response.status == 410, "\(response.text)")
            #expect(response.code == "gone")
        }

        @Test func aWaitingPatchSeesTheRevisionMoveOn() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet()
            let response = try patchWhileHeld(
                me, set: set.id, held: "UPDATE app.study_sets SET title = 'theirs' WHERE id = $1",
                json: ["title": "mine"], headers: [("If-Match", "\"1\"")])
            #expect(response.status == 412, "\(response.text)")
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").object["title"] as? String == "theirs")
        }

        @Test func aWaitingPutSeesItsBaseRevisionGoStale() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet("T", description: "D")
            let response = try patchWhileHeld(
                me, set: set.id, held: "UPDATE app.study_sets SET description = 'theirs' WHERE id = $1",
                json: ["title": "mine", "revision": 1], method: "PUT")
            #expect(response.status == 409, "\(response.text)")
            #expect(response.code == "revision_conflict")
            let stored = try me.call("GET", "/v1/study_sets/\(set.id)").object
            #expect(stored["title"] as? String == "T", "nothing of the stale PUT was written")
            #expect(stored["description"] as? String == "theirs")
        }

        @Test func aWaitingPutWithStarReplacesTheNewestRow() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet("T", description: "D")
            let response = try patchWhileHeld(
                me, set: set.id, held: "UPDATE app.study_sets SET description = 'theirs' WHERE id = $1",
                json: ["title": "mine"], headers: [("If-Match", "*")], method: "PUT")
            #expect(response.status == 200, "\(response.text)")
            #expect(response.object["title"] as? String == "mine")
            #expect(response.object["description"] as? String == "", "a PUT resets what it leaves out, whoever wrote it")
            #expect(response.object.revision == 3)
        }

        @Test func aWaitingDeleteSeesTheRevisionMoveOn() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet()
            let response = try patchWhileHeld(
                me, set: set.id, held: "UPDATE app.study_sets SET title = 'theirs' WHERE id = $1",
                json: nil, method: "DELETE", query: "?revision=1")
            #expect(response.status == 409, "\(response.text)")
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").object["title"] as? String == "theirs", "still live")
        }

        @Test func aWaitingDeleteOfARowDeletedMeanwhileWritesNothing() throws {
            let me = try ResourceFixture.user("cp")
            let set = try me.createSet()
            let response = try patchWhileHeld(
                me, set: set.id, held: "UPDATE app.study_sets SET is_deleted = true WHERE id = $1",
                json: nil, headers: [("If-Match", "*")], method: "DELETE")
            #expect(response.status == 200, "\(response.text)")
            #expect(response.object["is_deleted"] as? Bool == true)
            #expect(response.object.revision == 2, "the other writer's tombstone, not a second write")
        }

        /// Runs `held` in an owner transaction, sends the PATCH (or `method`),
        /// waits until its backend is blocked on the row lock, commits, and
        /// returns the answer.
        private func patchWhileHeld(
            _ me: API, set: String, held: String, json: [String: Any]?, headers: [(String, String)] = [],
            method: String = "PATCH", query: String = ""
        ) throws -> TestHTTPClient.Response {
            let owner = try PostgresConnection(url: me.server.database.ownerURL)
            defer { owner.close() }
            try owner.execute("BEGIN")
            _ = try owner.query(held, [set])
            let answer = Mutex<Result<TestHTTPClient.Response, any Error>?>(nil)
            let (server, token, userID) = (me.server, me.token, me.userID)
            let body = try json.map { try Array(JSONSerialization.data(withJSONObject: $0)) }
            let thread = Thread {
                let client = API(client: server.client(), token: token, userID: userID, server: server)
                let result = Result { try client.call(method, "/v1/study_sets/\(set)\(query)", body: body, headers: headers) }
                answer.withLock { $0 = result }
            }
            thread.start()
            // Commit only once the PATCH is really waiting, so the test exercises the re-check.
            // pg_locks, not pg_stat_activity: inside this open transaction pg_stat_activity is
            // read once and kept, so a pool connection opened after the first look (the pool
            // grows under a loaded run) was never seen waiting, and its PATCH hit the
            // statement timeout (a 503) while the test waited.
            let waiting = try eventually(within: 20) {
                let rows = try owner.query(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY (pg_blocking_pids(pid))")
                return rows.first?[0] != "0"
            }
            #expect(waiting, "the \(method) never waited for the row lock")
            try owner.execute("COMMIT")
            return try waitFor("the \(method)'s answer", within: 20) { answer.withLock { $0 } }.get()
        }
    }
}
