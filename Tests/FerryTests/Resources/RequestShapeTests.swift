import Foundation
import Testing

extension Resources {
    /// Requests the contract refuses by their shape, found by probing from outside: a
    /// query number with a sign, a parameter given twice, a singleton header given twice,
    /// a batch operation's target with what a request line may not carry.
    @Suite struct RequestShapeTests {
        @Test func queryNumbersAreDigitsOnlyAndGivenOnce() throws {
            let me = try ResourceFixture.user()
            for path in [
                "/v1/study_sets?limit=%2B5", "/v1/study_sets?limit=-0", "/v1/study_sets?limit=1&limit=2",
                "/v1/study_sets?modified_since=%2B5", "/v1/study_sets?order=title&order=id",
                "/v1/changes?limit=%2B5", "/v1/changes?wait=%2B1",
            ] {
                let response = try me.call("GET", path)
                #expect(response.status == 400, "\(path): \(response.text)")
                #expect(response.code == "invalid_query", "\(path): \(response.text)")
            }
            #expect(try me.call("GET", "/v1/study_sets?limit=5").status == 200)
            #expect(try me.call("GET", "/v1/changes?limit=5").status == 200)
        }

        /// With two, a proxy in front and Ferry could act on different ones: which caller,
        /// which retry. RFC 9110 makes neither a list.
        @Test func aSingletonHeaderGivenTwiceIs400() throws {
            let me = try ResourceFixture.user()
            let other = try ResourceFixture.user()
            let twoCallers = try me.call("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(other.token)")])
            #expect(twoCallers.status == 400, "\(twoCallers.text)")
            let twoTypes = try me.call(
                "POST", "/v1/study_sets", body: Array(#"{"title": "t"}"#.utf8),
                headers: [("Content-Type", "application/json"), ("Content-Type", "text/plain")])
            #expect(twoTypes.status == 400, "\(twoTypes.text)")
            let twoKeys = try me.call(
                "POST", "/v1/study_sets", json: ["title": "keyed"], headers: [("Idempotency-Key", "k-one"), ("Idempotency-Key", "k-two")])
            #expect(twoKeys.status == 400, "\(twoKeys.text)")
            #expect(twoKeys.text.contains("Idempotency-Key"), "\(twoKeys.text)")
            let count = try me.server.ownerQuery("SELECT count(*) FROM app.study_sets WHERE creator_id = $1", [me.userID])
            #expect(count.rows.first?[0] == "0", "nothing written")
            #expect(try me.call("POST", "/v1/study_sets", json: ["title": "keyed"], headers: [("Idempotency-Key", "k-one")]).status == 201)
        }

        @Test func aBatchOperationsTargetFollowsTheRequestLinesRules() throws {
            let me = try ResourceFixture.user()
            for path in ["/v1/study_sets/%00", "/v1/study_sets/%0A", "/v1/study_sets/%ZZ", "/v1/study_sets?title=%00", "/v1/study_sets/%FF"] {
                let response = try me.call("POST", "/v1/batch", json: ["operations": [["method": "GET", "path": path]]])
                #expect(response.status == 400, "\(path): \(response.text)")
                #expect(response.code == "bad_request", "\(path): \(response.text)")
                #expect(response.object["operation_index"] as? Int == 0, "\(path): \(response.text)")
            }
            let plain = try me.call("GET", "/v1/study_sets/%00")
            #expect(plain.status == 400, "the same target as a request: \(plain.text)")
            let query = try me.call("POST", "/v1/batch", json: ["operations": [["method": "GET", "path": "/v1/study_sets?title=a+b%20c"]]])
            #expect(query.status == 200, "\(query.text)")
        }

        /// Past the structural scan, a batch body Foundation cannot read holds a number no
        /// Double holds: said as such, not as a body of the wrong shape.
        @Test func aBatchBodysUnreadableNumberIsNamed() throws {
            let me = try ResourceFixture.user()
            let body = #"{"operations": [{"method": "POST", "path": "/v1/study_sets", "body": {"title": 1e400}}]}"#
            let response = try me.call("POST", "/v1/batch", body: Array(body.utf8))
            #expect(response.status == 400, "\(response.text)")
            #expect(response.code == "invalid_json", "\(response.text)")
            #expect(response.text.contains("1e400"), "\(response.text)")
        }

        /// The path names the row; another id in the body was skipped, and the write changed
        /// the path's row with 200. The path's own id, spelt any way, is an echo and passes.
        @Test func anUpdatesBodyIDIsThePathsOr422() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let other = UUID().uuidString.lowercased()
            for method in ["PATCH", "PUT"] {
                let moved = try me.call(method, "/v1/study_sets/\(set.id)", json: ["id": other, "title": "moved"], headers: [("If-Match", "*")])
                #expect(moved.status == 422, "\(method): \(moved.text)")
                let entry = (moved.object["errors"] as? [[String: Any]])?.first
                #expect(entry?["field"] as? String == "id" && entry?["reason"] as? String == "id_mismatch", "\(moved.text)")
            }
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").object["title"] as? String == "Set", "nothing written")
            let echoed = try me.call(
                "PATCH", "/v1/study_sets/\(set.id)", json: ["id": set.id.uppercased().replacingOccurrences(of: "-", with: ""), "title": "echoed"],
                headers: [("If-Match", "*")])
            #expect(echoed.status == 200, "\(echoed.text)")
            // An escape in the name ("i\u0064" is id to jsonb) or in the value reads the same.
            for body in [
                #"{"id": "\#(set.id)", "i\u0064": "\#(other)", "title": "escaped"}"#,
                #"{"id": "\u00\#(String(other.utf8.first!, radix: 16))\#(other.dropFirst())", "title": "escaped"}"#,
            ] {
                let escaped = try me.call("PATCH", "/v1/study_sets/\(set.id)", body: Array(body.utf8), headers: [("If-Match", "*")])
                #expect(escaped.status == 422 && escaped.text.contains("id_mismatch"), "\(body): \(escaped.text)")
            }
            let escapedEcho = try me.call(
                "PATCH", "/v1/study_sets/\(set.id)", body: Array(#"{"i\u0064": "\#(set.id)", "title": "echoed again"}"#.utf8),
                headers: [("If-Match", "*")])
            #expect(escapedEcho.status == 200, "\(escapedEcho.text)")
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").object["title"] as? String == "echoed again")
        }

        /// docs/API.md: an empty array is a bulk call of no items. It writes nothing and
        /// answers `[]`, with the status the action's success has.
        @Test func anEmptyBulkCallWritesNothing() throws {
            let me = try ResourceFixture.user()
            for (method, status) in [("POST", 201), ("PATCH", 200), ("DELETE", 200)] {
                let response = try me.call(method, "/v1/study_sets", body: Array("[]".utf8))
                #expect(response.status == status, "\(method): \(response.text)")
                #expect(response.text.filter { !$0.isWhitespace } == "[]", "\(method): \(response.text)")
            }
            #expect((try me.call("GET", "/v1/study_sets").object["data"] as? [Any])?.count == 0)
        }

        /// docs/API.md: a member given twice counts with its last value, as jsonb keeps it. So
        /// an `id` echoed first and another one last names another row (422), and the other
        /// way round is the path's own id.
        @Test func anIDGivenTwiceCountsWithItsLast() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let other = UUID().uuidString.lowercased()
            let moved = try me.call(
                "PATCH", "/v1/study_sets/\(set.id)", body: Array(#"{"id": "\#(set.id)", "id": "\#(other)", "title": "moved"}"#.utf8),
                headers: [("If-Match", "*")])
            #expect(moved.status == 422 && moved.text.contains("id_mismatch"), "\(moved.text)")
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").object["title"] as? String == "Set", "nothing written")
            let echoed = try me.call(
                "PATCH", "/v1/study_sets/\(set.id)", body: Array(#"{"id": "\#(other)", "id": "\#(set.id)", "title": "echoed"}"#.utf8),
                headers: [("If-Match", "*")])
            #expect(echoed.status == 200, "\(echoed.text)")
        }

        /// docs/API.md: an id that cannot be one of the resource's names no row, 404 on every
        /// action; a bulk item's said "id is required" (422) though one was sent.
        @Test func aBulkItemsMalformedIDIs404() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            for method in ["PATCH", "DELETE"] {
                let response = try me.call(method, "/v1/study_sets", json: [["id": "zz", "revision": 1, "title": "P"]])
                #expect(response.status == 404, "\(method): \(response.text)")
                #expect(response.code == "not_found", "\(method): \(response.text)")
                let missing = try me.call(method, "/v1/study_sets", json: [["revision": 1, "title": "P"]])
                #expect(missing.status == 422, "no id at all is still required: \(missing.text)")
            }
            let twice = try me.call("DELETE", "/v1/study_sets/\(set.id)?revision=1&revision=3")
            #expect(twice.status == 400, "\(twice.text)")
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").object["is_deleted"] as? Bool == false)
        }

        @Test func signingInWithABodyThatIsNotJSONIs415() throws {
            let me = try ResourceFixture.user("signin")
            let name = try me.call("GET", "/v1/auth/me").object["name"] as? String ?? ""
            let basic = "Basic " + Data("\(name):correct-horse".utf8).base64EncodedString()
            let client = me.server.client()
            let refused = try client.request(
                "POST", "/v1/auth/token", headers: [("Authorization", basic), ("Content-Type", "text/plain")], body: Array("x".utf8))
            #expect(refused.status == 415, "\(refused.text)")
            let signedIn = try client.request("POST", "/v1/auth/token", headers: [("Authorization", basic)])
            #expect(signedIn.status == 201, "\(signedIn.text)")
        }
    }
}
