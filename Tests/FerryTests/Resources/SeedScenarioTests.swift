import Foundation
import Testing

extension Resources {
    /// The offline notes flow from the seed design, end to end over HTTP.
    @Suite struct SeedScenarioTests {
        @Test func offlineEditsConflictResolveAndMergePerField() throws {
            let me = try ResourceFixture.user("seed")
            // 1. Create a set.
            let created = try me.createSet("Spanish", description: "verbs")
            let id = created.id
            #expect(created.revision == 1)
            // 2. GET it, with its ETag.
            let first = try me.call("GET", "/v1/study_sets/\(id)")
            #expect(first.status == 200)
            let etag = try #require(first.header("ETag"))
            #expect(etag == "\"1\"")
            #expect(first.header("Last-Modified") != nil)
            // 3. The same GET with If-None-Match: 304.
            let cached = try me.call("GET", "/v1/study_sets/\(id)", headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)
            #expect(cached.header("ETag") == etag)
            // 4. Another client (the same user on another device) edits the set.
            let other = API(client: me.server.client(), token: me.token, userID: me.userID, server: me.server)
            let edit = try other.call("PATCH", "/v1/study_sets/\(id)", json: ["title": "Spanish A1", "revision": 1])
            #expect(edit.status == 200, "\(edit.text)")
            #expect(edit.object.revision == 2)
            // 5. The GET answers 200 with the new ETag.
            let again = try me.call("GET", "/v1/study_sets/\(id)", headers: [("If-None-Match", etag)])
            #expect(again.status == 200)
            #expect(again.header("ETag") == "\"2\"")
            #expect(again.object["title"] as? String == "Spanish A1")
            // 6. PUT with the old revision: 409 with current.
            let stale = try me.call("PUT", "/v1/study_sets/\(id)", json: ["title": "Mine", "description": "mine", "revision": 1])
            #expect(stale.status == 409)
            #expect(stale.code == "revision_conflict")
            let current = try #require(stale.object["current"] as? [String: Any])
            #expect(current.revision == 2)
            #expect(current["title"] as? String == "Spanish A1")
            // 7. Resolve with the current revision: 200.
            let resolved = try me.call("PUT", "/v1/study_sets/\(id)", json: ["title": "Mine", "description": "mine", "revision": 2])
            #expect(resolved.status == 200, "\(resolved.text)")
            #expect(resolved.object.revision == 3)
            #expect(resolved.header("ETag") == "\"3\"")

            // Then both clients patch different fields from the same base revision.
            let title = try other.call("PATCH", "/v1/study_sets/\(id)", json: ["title": "Other's title", "revision": 3])
            #expect(title.status == 200, "\(title.text)")
            let description = try me.call("PATCH", "/v1/study_sets/\(id)", json: ["description": "my notes", "revision": 3])
            #expect(description.status == 200, "\(description.text)")
            #expect(description.object.revision == 5)
            let final = try me.call("GET", "/v1/study_sets/\(id)")
            #expect(final.object["title"] as? String == "Other's title")
            #expect(final.object["description"] as? String == "my notes")
            #expect(final.object.revision == 5)
        }
    }
}
