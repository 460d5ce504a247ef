import FerryHTTPTestSupport
import FerryPostgres
import Foundation
import Synchronization
import Testing

extension Resources {
    /// `Idempotency-Key`: replays, reuse, concurrency, expiry.
    @Suite struct IdempotencyTests {
        static func key() -> String { "k-" + UUID().uuidString }

        static func termCount(_ api: API, set: String) throws -> Int {
            (try api.call("GET", "/v1/terms?set_id=\(set)").object["data"] as? [Any])?.count ?? -1
        }

        @Test func aLostResponseThenARetryIsReplayed() throws {
            let me = try ResourceFixture.user("idem")
            let set = try me.createSet().id
            let key = Self.key()
            let body: [String: Any] = ["set_id": set, "word": "once"]  // no id: a plain retry would create a second row
            let first = try me.call("POST", "/v1/terms", json: body, headers: [("Idempotency-Key", key)])
            #expect(first.status == 201, "\(first.text)")
            #expect(first.header("Idempotent-Replayed") == nil)
            // The response is "lost"; the client retries with the same key.
            let retry = try me.call("POST", "/v1/terms", json: body, headers: [("Idempotency-Key", key)])
            #expect(retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.body == first.body)
            #expect(retry.header("ETag") == first.header("ETag"))
            #expect(retry.header("Location") == first.header("Location"))
            #expect(try Self.termCount(me, set: set) == 1)
            // Keys are per user: another user's same key is a new request.
            let other = try ResourceFixture.user("idem")
            let theirs = try other.call("POST", "/v1/study_sets", json: ["title": "t"], headers: [("Idempotency-Key", key)])
            #expect(theirs.status == 201)
            #expect(theirs.header("Idempotent-Replayed") == nil)
            // PATCH and DELETE replay too, without bumping the revision twice.
            let id = first.object.id
            // The same bytes: a retry resends the stored request (the hash is over the raw body).
            let patchBody = Array(#"{"word": "twice?", "revision": 1}"#.utf8)
            let patch = try me.call("PATCH", "/v1/terms/\(id)", body: patchBody, headers: [("Idempotency-Key", key + "p")])
            #expect(patch.status == 200)
            let again = try me.call("PATCH", "/v1/terms/\(id)", body: patchBody, headers: [("Idempotency-Key", key + "p")])
            #expect(again.status == 200, "\(again.text)")
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(try me.call("GET", "/v1/terms/\(id)").object.revision == 2)
        }

        @Test func aKeyReusedForAnotherRequestIs422AndFailuresAreNotStored() throws {
            let me = try ResourceFixture.user("idem")
            let set = try me.createSet().id
            let key = Self.key()
            let first = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "a"], headers: [("Idempotency-Key", key)])
            #expect(first.status == 201)
            let otherBody = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "b"], headers: [("Idempotency-Key", key)])
            #expect(otherBody.status == 422)
            #expect(otherBody.code == "idempotency_key_reused")
            let otherPath = try me.call("POST", "/v1/folders", json: ["set_id": set, "word": "a"], headers: [("Idempotency-Key", key)])
            #expect(otherPath.status == 422)
            #expect(otherPath.code == "idempotency_key_reused")
            #expect(try Self.termCount(me, set: set) == 1)
            // A failed request stores nothing: fixed, the same key then succeeds.
            let key2 = Self.key()
            let bad = try me.call("POST", "/v1/terms", json: ["set_id": set, "nope": 1], headers: [("Idempotency-Key", key2)])
            #expect(bad.status == 422)
            let fixed = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "c"], headers: [("Idempotency-Key", key2)])
            #expect(fixed.status == 201, "\(fixed.text)")
            // A malformed key is a 400.
            let long = try me.call("POST", "/v1/terms", json: ["set_id": set], headers: [("Idempotency-Key", String(repeating: "k", count: 256))])
            #expect(long.status == 400)
        }

        /// The same request with the same key, refused while its cause stands and
        /// retried after the cause went away (another user shared the set): it runs
        /// again and succeeds, and from then on it replays.
        @Test func aRefusedWriteRetriedAfterItsCauseIsGoneRunsAgain() throws {
            let me = try ResourceFixture.user("idem")
            let owner = try ResourceFixture.user("idem_owner")
            let theirs = try owner.createSet().id
            let folder = try me.call("POST", "/v1/folders", json: ["name": "f"]).object.id
            let key = Self.key()
            let link: [String: Any] = ["id": UUID().uuidString.lowercased(), "folder_id": folder, "set_id": theirs]
            let refused = try me.call("POST", "/v1/folder_sets", json: link, headers: [("Idempotency-Key", key)])
            #expect(refused.status == 422, "\(refused.text)")
            #expect(refused.header("Idempotent-Replayed") == nil)
            #expect(try owner.call("POST", "/v1/set_collaborators", json: ["set_id": theirs, "user_id": me.userID]).status == 201)
            let retried = try me.call("POST", "/v1/folder_sets", json: link, headers: [("Idempotency-Key", key)])
            #expect(retried.status == 201, "\(retried.text)")
            #expect(retried.header("Idempotent-Replayed") == nil)
            let again = try me.call("POST", "/v1/folder_sets", json: link, headers: [("Idempotency-Key", key)])
            #expect(again.status == 201)
            #expect(again.header("Idempotent-Replayed") == "true")
        }

        @Test func twoIdenticalConcurrentRequests() throws {
            let me = try ResourceFixture.user("idem")
            let set = try me.createSet().id
            let key = Self.key()
            let body = Array(#"{"set_id": "\#(set)", "word": "race"}"#.utf8)
            let (server, token, userID) = (me.server, me.token, me.userID)
            // Hold the set row so that the first request stays inside its transaction.
            let owner = try PostgresConnection(url: me.server.database.ownerURL)
            defer { owner.close() }
            try owner.execute("BEGIN")
            _ = try owner.query("SELECT 1 FROM app.study_sets WHERE id = $1 FOR UPDATE", [set])
            let statuses = Mutex<[Int]>([])
            let codes = Mutex<[String]>([])
            let retryAfter = Mutex<[String]>([])
            let threads = (0..<2).map { _ in
                Thread {
                    let client = API(client: server.client(), token: token, userID: userID, server: server)
                    if let response = try? client.call("POST", "/v1/terms", body: body, headers: [("Idempotency-Key", key)]) {
                        statuses.withLock { $0.append(response.status) }
                        if let code = response.code { codes.withLock { $0.append(code) } }
                        if let value = response.header("Retry-After") { retryAfter.withLock { $0.append(value) } }
                    }
                }
            }
            threads.forEach { $0.start() }
            // One of them answers 409 at once; the other waits for the row.
            try waitUntil("the first answer") { statuses.withLock { $0.count } >= 1 }
            #expect(statuses.withLock { $0 } == [409])
            #expect(codes.withLock { $0 } == ["idempotency_key_in_use"])
            #expect(retryAfter.withLock { $0 } == ["1"])
            try owner.execute("COMMIT")
            try waitUntil("the second answer") { statuses.withLock { $0.count } >= 2 }
            #expect(statuses.withLock { $0 }.sorted() == [201, 409])
            let retry = try me.call("POST", "/v1/terms", body: body, headers: [("Idempotency-Key", key)])
            #expect(retry.status == 201)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(try Self.termCount(me, set: set) == 1)
        }

        @Test func anExpiredKeyIsUsableAgain() throws {
            let me = try ResourceFixture.user("idem")
            let set = try me.createSet().id
            let key = Self.key()
            let first = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "a"], headers: [("Idempotency-Key", key)])
            #expect(first.status == 201)
            let stored = try me.server.ownerQuery(
                "SELECT expires_at > now() + interval '23 hours' FROM ferry.idempotency_keys WHERE user_id = $1 AND key = $2", [me.userID, key])
            #expect(stored.rows.first?[0] == "t")
            _ = try me.server.ownerQuery(
                "UPDATE ferry.idempotency_keys SET expires_at = now() - interval '1 second' WHERE user_id = $1 AND key = $2", [me.userID, key])
            let reused = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "b"], headers: [("Idempotency-Key", key)])
            #expect(reused.status == 201, "\(reused.text)")
            #expect(reused.header("Idempotent-Replayed") == nil)
            #expect(try Self.termCount(me, set: set) == 2)
            // Purging removes expired keys.
            _ = try me.server.ownerQuery(
                "UPDATE ferry.idempotency_keys SET expires_at = now() - interval '1 second' WHERE user_id = $1 AND key = $2", [me.userID, key])
            _ = try me.server.ownerQuery("SELECT ferry.purge_tombstones(0, 1000)")
            let left = try me.server.ownerQuery("SELECT count(*) FROM ferry.idempotency_keys WHERE user_id = $1 AND key = $2", [me.userID, key])
            #expect(left.rows.first?[0] == "0")
        }

        @Test func aBatchWithAKeyIsReplayedWhole() throws {
            let me = try ResourceFixture.user("idem")
            let set = try me.createSet().id
            let key = Self.key()
            let batch: [String: Any] = [
                "operations": [
                    ["method": "POST", "path": "/v1/terms", "body": ["set_id": set, "word": "x", "rank": "last"]],
                    [
                        "method": "POST", "path": "/v1/terms", "body": ["set_id": set, "word": "y", "rank": "last"],
                        "headers": ["Idempotency-Key": "ignored"],
                    ],
                ]
            ]
            // A retry resends the same bytes.
            let bytes = Array(try JSONSerialization.data(withJSONObject: batch))
            let first = try me.call("POST", "/v1/batch", body: bytes, headers: [("Idempotency-Key", key)])
            #expect(first.status == 200, "\(first.text)")
            let retry = try me.call("POST", "/v1/batch", body: bytes, headers: [("Idempotency-Key", key)])
            #expect(retry.status == 200)
            #expect(retry.header("Idempotent-Replayed") == "true")
            #expect(retry.body == first.body)
            #expect(try Self.termCount(me, set: set) == 2)
            #expect(try ComputedRankTests.words(me, set: set) == ["x", "y"])
        }
    }
}
