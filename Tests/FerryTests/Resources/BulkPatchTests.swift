import Foundation
import Testing

extension Resources {
    /// `PATCH /v1/<r>` with many items: one transaction, every failure listed.
    @Suite struct BulkPatchTests {
        @Test func successUpdatesEveryItem() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let terms = try (0..<4).map { try me.createTerm(set: set.id, word: "w\($0)") }
            let response = try me.call("PATCH", "/v1/terms", json: terms.map { ["id": $0.id, "revision": 1, "word": "x" + $0.id.prefix(4)] })
            #expect(response.status == 200, "\(response.text)")
            #expect(response.array.map(\.id) == terms.map(\.id))
            #expect(response.array.allSatisfy { $0.revision == 2 })
        }

        @Test func threeBadItemsAreAllListedAndNothingIsWritten() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let terms = try (0..<5).map { try me.createTerm(set: set.id, word: "w\($0)") }
            #expect(try me.call("DELETE", "/v1/terms/\(terms[3].id)?revision=1").status == 200)
            let items: [[String: Any]] = [
                ["id": terms[0].id, "revision": 1, "word": "ok"],
                ["id": UUID().uuidString, "revision": 1, "word": "missing"],
                ["id": terms[2].id, "revision": 1, "word": "ok"],
                ["id": terms[3].id, "revision": 2, "word": "deleted"],
                ["id": terms[4].id, "revision": 1, "word": String(repeating: "x", count: 10_001)],
            ]
            let response = try me.call("PATCH", "/v1/terms", json: items)
            #expect(response.status == 404, "the first failing item's status")
            let byIndex = Dictionary(response.errors.map { ($0["index"] as? Int ?? -1, $0) }, uniquingKeysWith: { a, _ in a })
            #expect(Set(byIndex.keys) == [1, 3, 4])
            #expect(byIndex[1]?["status"] as? Int == 404)
            #expect(byIndex[3]?["status"] as? Int == 410)
            #expect(byIndex[3]?["current"] != nil)
            #expect(byIndex[4]?["status"] as? Int == 422)
            #expect(byIndex[4]?["field"] as? String == "word")
            #expect(try me.call("GET", "/v1/terms/\(terms[0].id)").object["word"] as? String == "w0", "nothing written")

            // Constraint errors only the write detects are all found too.
            let checks = try me.call(
                "PATCH", "/v1/terms",
                json: [
                    ["id": terms[0].id, "revision": 1, "rank": ""],
                    ["id": terms[1].id, "revision": 1, "word": "fine"],
                    ["id": terms[2].id, "revision": 1, "definition": String(repeating: "y", count: 10_001)],
                ])
            #expect(checks.status == 422, "\(checks.text)")
            #expect(checks.errors.compactMap { $0["index"] as? Int } == [0, 2])
            #expect(checks.errors.compactMap { $0["field"] as? String } == ["rank", "definition"])
            #expect(try me.call("GET", "/v1/terms/\(terms[1].id)").object.revision == 1)
        }

        @Test func staleRevisionsMergeOrConflictPerItem() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let t = try me.createTerm(set: set.id)
            #expect(try me.call("PATCH", "/v1/terms/\(t.id)", json: ["word": "w2", "revision": 1]).status == 200)
            let merge = try me.call("PATCH", "/v1/terms", json: [["id": t.id, "revision": 1, "definition": "d2"]])
            #expect(merge.status == 200, "\(merge.text)")
            let conflict = try me.call("PATCH", "/v1/terms", json: [["id": t.id, "revision": 1, "word": "w3"]])
            #expect(conflict.status == 409)
            #expect(conflict.errors.first?["conflicting_fields"] as? [String] == ["word"])
            let noRevision = try me.call("PATCH", "/v1/terms", json: [["id": t.id, "word": "w3"]])
            #expect(noRevision.status == 400)
            #expect(noRevision.code == "revision_required")
            let duplicate = try me.call(
                "PATCH", "/v1/terms", json: [["id": t.id, "revision": 3, "word": "a"], ["id": t.id, "revision": 3, "word": "b"]])
            #expect(duplicate.status == 422)
        }
    }
}
