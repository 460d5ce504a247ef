import Foundation
import Testing

extension Resources {
    /// `GET /v1/<r>/<id>`, multi-show, conditional reads, HEAD.
    @Suite struct ReadTests {
        @Test func conditionalGetAndHead() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let path = "/v1/study_sets/\(set.id)"
            let get = try me.call("GET", path)
            let lastModified = try #require(get.header("Last-Modified"))
            for method in ["GET", "HEAD"] {
                let inm = try me.call(method, path, headers: [("If-None-Match", "\"1\"")])
                #expect(inm.status == 304, "\(method)")
                #expect(inm.header("ETag") == "\"1\"")
                #expect(try me.call(method, path, headers: [("If-None-Match", "W/\"1\"")]).status == 304, "weak comparison")
                #expect(try me.call(method, path, headers: [("If-None-Match", "\"7\", \"1\"")]).status == 304)
                #expect(try me.call(method, path, headers: [("If-None-Match", "*")]).status == 304)
                #expect(try me.call(method, path, headers: [("If-None-Match", "\"2\"")]).status == 200)
                // A tag that is not the revision as Ferry writes it is another representation.
                let padded = try me.call(method, path, headers: [("If-None-Match", "\"01\"")])
                #expect(padded.status == 200, "\(method)")
                #expect(padded.header("ETag") == "\"1\"")
                if method == "GET" { #expect(padded.object.id == set.id, "the full body") }
                let ims = try me.call(method, path, headers: [("If-Modified-Since", lastModified)])
                #expect(ims.status == 304, "\(method)")
                #expect(try me.call(method, path, headers: [("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")]).status == 200)
                // If-None-Match wins over If-Modified-Since.
                let both = try me.call(method, path, headers: [("If-None-Match", "\"2\""), ("If-Modified-Since", lastModified)])
                #expect(both.status == 200, "\(method)")
            }
            let head = try me.call("HEAD", path)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("ETag") == "\"1\"")
        }

        @Test func missingMalformedAndDeletedRows() throws {
            let me = try ResourceFixture.user()
            #expect(try me.call("GET", "/v1/study_sets/\(UUID().uuidString)").status == 404)
            #expect(try me.call("GET", "/v1/study_sets/not-a-uuid").status == 404)
            #expect(try me.call("GET", "/v1/no_such_table/\(UUID().uuidString)").status == 404)
            let set = try me.createSet()
            #expect(try me.call("DELETE", "/v1/study_sets/\(set.id)?revision=1").status == 200)
            let gone = try me.call("GET", "/v1/study_sets/\(set.id)")
            #expect(gone.status == 410)
            #expect(gone.code == "gone")
            #expect(gone.object["id"] as? String == set.id)
            #expect(gone.object["revision"] as? Int == 2)
            #expect(gone.object["is_deleted"] as? Bool == true)
            #expect(gone.header("Content-Type") == "application/problem+json")
            let current = gone.object["current"] as? [String: Any]
            #expect(Set(current?.keys.map { $0 } ?? []) == ["id", "creator_id", "revision", "last_modified", "is_deleted"])
            // Naming the tombstone's revision changes nothing: still 410, with the tombstone.
            let named = try me.call("GET", "/v1/study_sets/\(set.id)", headers: [("If-None-Match", "\"2\"")])
            #expect(named.status == 410)
            #expect((named.object["current"] as? [String: Any])?["revision"] as? Int == 2)
        }

        @Test func multiShowKeepsRequestOrderWithTombstonesAndMissing() throws {
            let me = try ResourceFixture.user()
            let other = try ResourceFixture.user()
            let a = try me.createSet("a"), b = try me.createSet("b"), c = try me.createSet("c")
            let hidden = try other.createSet("hidden")
            #expect(try me.call("DELETE", "/v1/study_sets/\(b.id)", headers: [("If-Match", "\"1\"")]).status == 200)
            let unknown = UUID().uuidString.lowercased()
            let path = "/v1/study_sets/\(c.id),\(unknown),\(b.id),\(hidden.id),bogus,\(a.id)"
            let response = try me.call("GET", path)
            #expect(response.status == 200)
            let data = response.object["data"] as? [[String: Any]] ?? []
            #expect(data.map(\.id) == [c.id, b.id, a.id])
            #expect(data[1]["is_deleted"] as? Bool == true)
            #expect(data[1]["title"] == nil, "a tombstone")
            #expect(response.object["missing"] as? [String] == [unknown, hidden.id, "bogus"])
            let etag = try #require(response.header("ETag"))
            #expect(try me.call("GET", path, headers: [("If-None-Match", etag)]).status == 304)
            #expect(try me.call("PATCH", "/v1/study_sets/\(a.id)", json: ["title": "a2", "revision": 1]).status == 200)
            let changed = try me.call("GET", path, headers: [("If-None-Match", etag)])
            #expect(changed.status == 200)
            #expect(changed.header("ETag") != etag)
        }
    }
}
