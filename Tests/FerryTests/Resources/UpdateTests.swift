import Foundation
import Testing

extension Resources {
    /// `PUT` and `PATCH /v1/<r>/<id>`: preconditions, replace, per-field merge.
    @Suite struct UpdateTests {
        @Test func putReplacesAndResetsLeftOutFields() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet("T", description: "long notes")
            let put = try me.call("PUT", "/v1/study_sets/\(set.id)", json: ["title": "New"], headers: [("If-Match", "\"1\"")])
            #expect(put.status == 200, "\(put.text)")
            #expect(put.object["title"] as? String == "New")
            #expect(put.object["description"] as? String == "", "reset to the column default")
            #expect(put.object["creator_id"] as? String == me.userID, "not updatable: kept")
            #expect(put.header("ETag") == "\"2\"")
            let missing = try me.call("PUT", "/v1/study_sets/\(set.id)", json: ["description": "x", "revision": 2])
            #expect(missing.status == 422)
            #expect(missing.errors.first?["field"] as? String == "title")
            #expect(missing.errors.first?["reason"] as? String == "required")
        }

        @Test func preconditionIsRequiredAndChecked() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let path = "/v1/study_sets/\(set.id)"
            let none = try me.call("PATCH", path, json: ["title": "x"])
            #expect(none.status == 400)
            #expect(none.code == "revision_required")
            let failed = try me.call("PATCH", path, json: ["title": "x"], headers: [("If-Match", "\"5\"")])
            #expect(failed.status == 412)
            #expect(failed.code == "precondition_failed")
            #expect((failed.object["current"] as? [String: Any])?.revision == 1)
            #expect(
                try me.call("PATCH", path, json: ["title": "x"], headers: [("If-Match", "W/\"1\"")]).status == 412,
                "If-Match compares strongly")
            #expect(try me.call("PUT", path, json: ["title": "x", "revision": 0]).status == 409)
            let star = try me.call("PATCH", path, json: ["title": "star"], headers: [("If-Match", "*")])
            #expect(star.status == 200)
            // If-Match is evaluated before the body's revision.
            let both = try me.call("PATCH", path, json: ["title": "y", "revision": 2], headers: [("If-Match", "\"1\"")])
            #expect(both.status == 412)
            #expect(try me.call("PATCH", "/v1/study_sets/\(UUID().uuidString)", json: ["title": "x", "revision": 1]).status == 404)
        }

        @Test func patchMergesDisjointFieldsAndConflictsOnTheSameField() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet("T", description: "D")
            let path = "/v1/study_sets/\(set.id)"
            #expect(try me.call("PATCH", path, json: ["title": "T2", "revision": 1]).status == 200)
            let disjoint = try me.call("PATCH", path, json: ["description": "D2", "revision": 1])
            #expect(disjoint.status == 200, "\(disjoint.text)")
            #expect(disjoint.object["title"] as? String == "T2")
            #expect(disjoint.object["description"] as? String == "D2")
            #expect(disjoint.object.revision == 3)

            let same = try me.call("PATCH", path, json: ["title": "T-mine", "revision": 1])
            #expect(same.status == 409)
            #expect(same.code == "revision_conflict")
            #expect(same.object["conflicting_fields"] as? [String] == ["title"])
            #expect((same.object["current"] as? [String: Any])?["title"] as? String == "T2")
            // The body's base revision still counts when If-Match passes (the fast statement binds it).
            let stale = try me.call("PATCH", path, json: ["title": "T-mine", "revision": 1], headers: [("If-Match", "\"3\"")])
            #expect(stale.status == 409, "\(stale.text)")
            let equal = try me.call("PATCH", path, json: ["title": "T2", "revision": 1])
            #expect(equal.status == 200, "a value equal to the current one is no conflict")
            #expect(equal.object.revision == 3, "and changes nothing")
            #expect(equal.header("ETag") == "\"3\"", "the ETag of the unchanged revision")
            let feedBefore = try me.call("GET", "/v1/study_sets/\(set.id)").header("Last-Modified")
            let noop = try me.call("PATCH", path, json: ["title": "T2"], headers: [("If-Match", "*")])
            #expect(noop.status == 200 && noop.object.revision == 3 && noop.header("ETag") == "\"3\"", "\(noop.text)")
            #expect(try me.call("GET", "/v1/study_sets/\(set.id)").header("Last-Modified") == feedBefore, "last_modified stays")
            let future = try me.call("PATCH", path, json: ["title": "x", "revision": 42])
            #expect(future.status == 409)
            // If-Match stays strict even where a body revision would merge.
            #expect(try me.call("PATCH", path, json: ["description": "z"], headers: [("If-Match", "\"1\"")]).status == 412)
        }

        @Test func writesToDeletedRowsAnswer410() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let path = "/v1/study_sets/\(set.id)"
            #expect(try me.call("DELETE", path, headers: [("If-Match", "\"1\"")]).status == 200)
            for method in ["PATCH", "PUT"] {
                let response = try me.call(method, path, json: ["title": "x", "revision": 2])
                #expect(response.status == 410, "\(method)")
                #expect(response.code == "gone")
                #expect((response.object["current"] as? [String: Any])?["is_deleted"] as? Bool == true)
            }
        }

        @Test func fieldRulesOnUpdate() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let other = try me.createSet()
            let term = try me.createTerm(set: set.id)
            let path = "/v1/terms/\(term.id)"
            // Echoing a read-only field unchanged is fine; changing it is not.
            let echo = try me.call("PATCH", path, json: ["set_id": set.id, "word": "new", "revision": 1])
            #expect(echo.status == 200, "\(echo.text)")
            let move = try me.call("PATCH", path, json: ["set_id": other.id, "revision": 2])
            #expect(move.status == 422)
            #expect(move.errors.first?["field"] as? String == "set_id")
            #expect(move.errors.first?["reason"] as? String == "read_only")
            // The same through PUT, which clients often send with the whole row.
            let putEcho = try me.call("PUT", path, json: ["set_id": set.id, "word": "newer", "rank": "U", "revision": 2])
            #expect(putEcho.status == 200, "\(putEcho.text)")
            #expect(putEcho.object.revision == 3)
            let putMove = try me.call("PUT", path, json: ["set_id": other.id, "word": "newer", "rank": "U", "revision": 3])
            #expect(putMove.status == 422)
            #expect(putMove.errors.first?["reason"] as? String == "read_only")
            #expect(try me.call("GET", path).object["set_id"] as? String == set.id)
            let unknown = try me.call("PATCH", path, json: ["colour": "red", "revision": 2])
            #expect(unknown.status == 422)
            #expect(unknown.code == "unknown_field")
            let wrong = try me.call("PATCH", path, json: ["word": ["x"], "definition": NSNull(), "revision": 2])
            #expect(wrong.status == 422)
            #expect(wrong.errors.count == 2)
            let check = try me.call("PATCH", path, json: ["rank": "", "revision": 2])
            #expect(check.status == 422)
            #expect(check.errors.first?["field"] as? String == "rank")
            #expect(check.errors.first?["reason"] as? String == "invalid_value")  // a stable code, not FerryRank's sentence
            #expect(try me.call("GET", path).object.revision == 3, "nothing was written")
        }
    }
}
