import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// Every 410 on a row has one shape (docs/API.md): problem `gone`, the
    /// tombstone's fields at the top level, the tombstone as `current`, and the
    /// tombstone's revision as the ETag. A tombstone carries the row's parent keys.
    @Suite struct GoneShapeTests {
        @Test func readsWritesAndCreatesAnswerOneShape() throws {
            let me = try ResourceFixture.user("gone")
            let set = try me.createSet()
            let setID = try #require(set["id"] as? String)
            let term = try me.createTerm(set: setID)
            let termID = try #require(term["id"] as? String)
            let deleted = try me.call("DELETE", "/v1/terms/\(termID)", headers: [("If-Match", "*")])
            #expect(deleted.status == 200, "\(deleted.text)")
            let tombstone = deleted.object
            #expect(tombstone["set_id"] as? String == setID, "a tombstone carries its parent key: \(deleted.text)")
            #expect(tombstone["is_deleted"] as? Bool == true)
            #expect(tombstone["word"] == nil)

            let answers = [
                ("GET", try me.call("GET", "/v1/terms/\(termID)")),
                ("PATCH", try me.call("PATCH", "/v1/terms/\(termID)", json: ["word": "x"], headers: [("If-Match", "*")])),
                (
                    "PUT",
                    try me.call(
                        "PUT", "/v1/terms/\(termID)", json: ["set_id": setID, "word": "x", "definition": "d", "rank": "U"],
                        headers: [("If-Match", "*")])
                ),
                ("POST on the tombstoned id", try me.call("POST", "/v1/terms", json: ["id": termID, "set_id": setID, "word": "x", "rank": "U"])),
            ]
            for (what, answer) in answers {
                #expect(answer.status == 410, "\(what): \(answer.text)")
                #expect(answer.code == "gone", "\(what)")
                let current = answer.object["current"] as? [String: Any]
                #expect(current?["id"] as? String == termID, "\(what): \(answer.text)")
                #expect(current?["set_id"] as? String == setID, "\(what): \(answer.text)")
                for key in ["id", "set_id", "revision", "last_modified", "is_deleted"] {
                    #expect(answer.object[key] != nil, "\(what) lacks \(key) at the top level: \(answer.text)")
                }
                #expect(answer.header("ETag") == "\"\(tombstone["revision"] ?? "")\"", "\(what)")
            }
        }
    }
}
