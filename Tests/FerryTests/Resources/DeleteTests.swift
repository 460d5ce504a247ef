import Foundation
import Testing

extension Resources {
    /// `DELETE /v1/<r>/<id>` and bulk delete.
    @Suite struct DeleteTests {
        @Test func softDeleteWithPreconditions() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let path = "/v1/study_sets/\(set.id)"
            let none = try me.call("DELETE", path)
            #expect(none.status == 400)
            #expect(none.code == "revision_required")
            let stale = try me.call("DELETE", path + "?revision=0")
            #expect(stale.status == 409)
            #expect((stale.object["current"] as? [String: Any])?.revision == 1)
            let failed = try me.call("DELETE", path, headers: [("If-Match", "\"9\"")])
            #expect(failed.status == 412)
            #expect(failed.object["current"] != nil)
            #expect(try me.call("DELETE", path + "?revision=abc").status == 400)
            let deleted = try me.call("DELETE", path + "?revision=1")
            #expect(deleted.status == 200)
            #expect(Set(deleted.object.keys) == ["id", "creator_id", "revision", "last_modified", "is_deleted"])
            #expect(deleted.object.id == set.id)
            #expect(deleted.object.revision == 2)
            #expect(deleted.object["is_deleted"] as? Bool == true)
            #expect(deleted.header("ETag") == "\"2\"")
            // Already deleted: 200 with the tombstone, whatever revision was sent.
            let again = try me.call("DELETE", path + "?revision=1")
            #expect(again.status == 200)
            #expect(again.object.revision == 2)
            let current = try me.call("DELETE", path + "?revision=2")
            #expect(current.status == 200)
            #expect(current.object.revision == 2, "a tombstone is not written again")
            // The tombstone stays: the row is still there, deleted.
            let stored = try me.server.ownerQuery("SELECT is_deleted, revision FROM app.study_sets WHERE id = $1", [set.id])
            #expect(stored.rows.first?[0] == "t")
            #expect(try me.call("DELETE", "/v1/study_sets/\(UUID().uuidString)?revision=1").status == 404)
        }

        @Test func bulkDeleteIsAllOrNothing() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let terms = try (0..<3).map { try me.createTerm(set: set.id, word: "w\($0)") }
            let stale = try me.call(
                "DELETE", "/v1/terms",
                json: [
                    ["id": terms[0].id, "revision": 1], ["id": terms[1].id, "revision": 7], ["id": terms[2].id, "revision": 1],
                ])
            #expect(stale.status == 409)
            #expect(stale.errors.map { $0["index"] as? Int } == [1])
            #expect(try me.call("GET", "/v1/terms/\(terms[0].id)").status == 200, "nothing was deleted")
            let ok = try me.call("DELETE", "/v1/terms", json: terms.map { ["id": $0.id, "revision": 1] })
            #expect(ok.status == 200)
            #expect(ok.array.count == 3)
            #expect(ok.array.allSatisfy { $0["is_deleted"] as? Bool == true && $0.revision == 2 })
        }
    }
}
