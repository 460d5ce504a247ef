import Foundation
import Testing

extension Resources {
    /// `POST /v1/batch`: in order, one transaction, all or nothing.
    @Suite struct BatchTests {
        static func op(_ method: String, _ path: String, body: Any? = nil, headers: [String: String]? = nil) -> [String: Any] {
            var op: [String: Any] = ["method": method, "path": path]
            if let body { op["body"] = body }
            if let headers { op["headers"] = headers }
            return op
        }

        @Test func deleteThenPostInOneTransaction() throws {
            let me = try ResourceFixture.user("batch")
            let set = try me.createSet().id
            let folder = try me.call("POST", "/v1/folders", json: ["name": "F"]).object.id
            let link = try me.call("POST", "/v1/folder_sets", json: ["folder_id": folder, "set_id": set])
            #expect(link.status == 201, "\(link.text)")
            // The unique pair can only be re-added after the old row is deleted: in order, in one transaction.
            let response = try me.call(
                "POST", "/v1/batch",
                json: [
                    "operations": [
                        Self.op("DELETE", "/v1/folder_sets/\(link.object.id)?revision=1"),
                        Self.op("POST", "/v1/folder_sets", body: ["folder_id": folder, "set_id": set]),
                        Self.op("GET", "/v1/folder_sets?folder_id=\(folder)"),
                    ]
                ])
            #expect(response.status == 200, "\(response.text)")
            let results = response.object["results"] as? [[String: Any]] ?? []
            #expect(results.map { $0["status"] as? Int ?? 0 } == [200, 201, 200])
            let deleted = results.first?["body"] as? [String: Any]
            #expect(deleted?["is_deleted"] as? Bool == true)
            let headers = results[1]["headers"] as? [String: Any] ?? [:]
            #expect(headers["ETag"] as? String == "\"1\"")
            #expect((headers["Location"] as? String ?? "").hasPrefix("/v1/folder_sets/"))
            let listed = (results[2]["body"] as? [String: Any])?["data"] as? [[String: Any]] ?? []
            #expect(listed.count == 1)
            // Each result equals what the operation gets alone.
            let alone = try me.call("GET", "/v1/folder_sets?folder_id=\(folder)")
            #expect(alone.object["data"] as? [[String: Any]] != nil)
            #expect((alone.object["data"] as? [[String: Any]])?.first?.id == listed.first?.id)
        }

        @Test func aFailureInOperationThreeRollsBackOneAndTwo() throws {
            let me = try ResourceFixture.user("batch")
            let set = try me.createSet("Before").id
            let term = try me.createTerm(set: set)
            let newID = UUID().uuidString.lowercased()
            let response = try me.call(
                "POST", "/v1/batch",
                json: [
                    "operations": [
                        Self.op("PATCH", "/v1/study_sets/\(set)", body: ["title": "After", "revision": 1]),
                        Self.op("POST", "/v1/terms", body: ["id": newID, "set_id": set, "word": "new", "rank": "last"]),
                        Self.op("DELETE", "/v1/terms/\(term.id)?revision=7"),  // stale: 409
                        Self.op("POST", "/v1/terms", body: ["set_id": set, "word": "never"]),
                    ]
                ])
            #expect(response.status == 409, "\(response.text)")
            #expect(response.code == "revision_conflict")
            #expect(response.object["operation_index"] as? Int == 2)
            #expect(response.object["current"] != nil)
            #expect(try me.call("GET", "/v1/study_sets/\(set)").object["title"] as? String == "Before")
            #expect(try me.call("GET", "/v1/terms/\(newID)").status == 404)
            #expect(try me.call("GET", "/v1/terms/\(term.id)").object.revision == 1)
            // A constraint error inside the database rolls back the same way.
            let invalid = try me.call(
                "POST", "/v1/batch",
                json: [
                    "operations": [
                        Self.op("PATCH", "/v1/study_sets/\(set)", body: ["title": "After", "revision": 1]),
                        Self.op("POST", "/v1/terms", body: ["set_id": set, "word": String(repeating: "x", count: 10_001)]),
                    ]
                ])
            #expect(invalid.status == 422, "\(invalid.text)")
            #expect(invalid.object["operation_index"] as? Int == 1)
            #expect(try me.call("GET", "/v1/study_sets/\(set)").object["title"] as? String == "Before")
        }

        @Test func limitsNestingAndBadOperations() throws {
            let me = try ResourceFixture.user("batch")
            let max = 100  // limits.max_batch_operations default
            let many = (0...max).map { _ in Self.op("GET", "/v1/study_sets") }
            let tooMany = try me.call("POST", "/v1/batch", json: ["operations": many])
            #expect(tooMany.status == 422)
            #expect(tooMany.code == "too_many_items")
            let exactly = try me.call("POST", "/v1/batch", json: ["operations": Array(many.dropLast())])
            #expect(exactly.status == 200)
            let nested = try me.call(
                "POST", "/v1/batch",
                json: [
                    "operations": [
                        Self.op("GET", "/v1/study_sets"), Self.op("POST", "/v1/batch", body: ["operations": []]),
                    ]
                ])
            #expect(nested.status == 400, "\(nested.text)")
            #expect(nested.object["operation_index"] as? Int == 1)
            let noRoute = try me.call(
                "POST", "/v1/batch",
                json: [
                    "operations": [
                        Self.op("GET", "/v1/study_sets"), Self.op("GET", "/v2/nothing"),
                    ]
                ])
            #expect(noRoute.status == 404)
            #expect(noRoute.object["operation_index"] as? Int == 1)
            let wrongMethod = try me.call("POST", "/v1/batch", json: ["operations": [Self.op("PUT", "/v1/terms")]])
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.code == "method_not_allowed")
            #expect(wrongMethod.object["operation_index"] as? Int == 0)
            // A path no request line could carry (8,192 bytes by default) is 414, as alone: a long
            // IN filter held a pooled connection for its statement timeout.
            let ids = (0..<300).map { _ in UUID().uuidString }.joined(separator: ",")
            let long = try me.call(
                "POST", "/v1/batch", json: ["operations": [Self.op("GET", "/v1/study_sets"), Self.op("GET", "/v1/terms?set_id=in.(\(ids))")]])
            #expect(long.status == 414, "\(long.text)")
            #expect(long.code == "uri_too_long")
            #expect(long.object["operation_index"] as? Int == 1)
            let fits = String(repeating: "x", count: 8_192 - "/v1/study_sets/".utf8.count)
            let atTheLimit = try me.call("POST", "/v1/batch", json: ["operations": [Self.op("GET", "/v1/study_sets/\(fits)")]])
            #expect(atTheLimit.status != 414, "\(atTheLimit.text)")
            let lower = try me.call("POST", "/v1/batch", json: ["operations": [Self.op("get", "/v1/terms")]])
            #expect(lower.status == 400)
            for body in [
                #"{"operations": 5}"#, #"[]"#, #"{"operations": [{"path": "/v1/terms"}]}"#, #"{"operations": [{"method":"GET","path":"v1"}]}"#,
            ] {
                let bad = try me.call("POST", "/v1/batch", body: Array(body.utf8))
                #expect(bad.status == 400, "\(body): \(bad.text)")
            }
            // One header named twice in another case is two values for one header, as in a request.
            let twice =
                #"{"operations": [{"method": "POST", "path": "/v1/study_sets", "headers": {"Content-Type": "application/json", "content-type": "text/plain"}, "body": {"title": "t"}}]}"#
            let doubled = try me.call("POST", "/v1/batch", body: Array(twice.utf8))
            #expect(doubled.status == 400 && doubled.text.contains("content-type twice"), "\(doubled.text)")
            let empty = try me.call("POST", "/v1/batch", json: ["operations": []])
            #expect(empty.status == 200)
            #expect((empty.object["results"] as? [Any])?.isEmpty == true)
            // The batch's caller applies to every operation; a bad token is 401 first.
            let anonymous = try me.client.request("POST", "/v1/batch", json: ["operations": many])
            #expect(anonymous.status == 401)
            let other = try me.call(
                "POST", "/v1/batch", json: ["operations": [Self.op("GET", "/v1/auth/me", headers: ["Authorization": "Bearer nope"])]])
            #expect(other.status == 200, "\(other.text)")
            let me2 = ((other.object["results"] as? [[String: Any]])?.first?["body"] as? [String: Any])?["id"] as? String
            #expect(me2 == me.userID)
        }
    }
}
