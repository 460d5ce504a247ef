import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// Single PATCH on a table with typed columns (the example schema's are all
    /// text and uuid): a value PostgreSQL cannot convert must answer the same
    /// 422 whether the fast path or the full plan meets it first.
    @Suite struct TypedPatchTests {
        @Test func typedFieldsThroughTheFastPathAndTheFullPlan() throws {
            let database = try ScratchDatabase()
            let owner = try database.connect()
            defer { owner.close() }
            _ = try owner.query(
                """
                CREATE TABLE app.gauges (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), n integer NOT NULL DEFAULT 0,
                                         at timestamptz, label text NOT NULL DEFAULT '')
                """)
            _ = try owner.query("SELECT ferry.enable_sync('app.gauges')")
            _ = try owner.query("GRANT SELECT, INSERT, UPDATE ON app.gauges TO ferry_app")
            let server = try TestServer(database: database)
            defer { server.stop() }
            let (_, token) = try server.user("gauge_user")
            let me = API(client: server.client(), token: token, userID: "", server: server)
            let created = try me.call("POST", "/v1/gauges", json: ["n": 1])
            #expect(created.status == 201, "\(created.text)")
            let path = "/v1/gauges/\(created.object.id)"
            let star = [("If-Match", "*")]

            // The field check runs before any conversion: a per-field 422, not a conversion error.
            let wrong = try me.call("PATCH", path, json: ["n": "abc"], headers: star)
            #expect(wrong.status == 422)
            #expect(wrong.errors.first?["field"] as? String == "n")
            #expect(wrong.errors.first?["reason"] as? String == "wrong_type")
            // A string that passes the JSON check but is no timestamp: PostgreSQL refuses it.
            let badTime = try me.call("PATCH", path, json: ["at": "not a time"], headers: star)
            #expect(badTime.status == 422, "\(badTime.text)")
            #expect(badTime.errors.first?["reason"] as? String == "invalid_value")

            let set = try me.call("PATCH", path, json: ["n": 5, "at": "2026-01-02T03:04:05Z"], headers: star)
            #expect(set.status == 200, "\(set.text)")
            #expect(set.object["n"] as? Int == 5)
            #expect(set.object.revision == 2)
            let same = try me.call("PATCH", path, json: ["n": 5, "at": "2026-01-02T03:04:05+00:00"], headers: star)
            #expect(same.status == 200)
            #expect(same.object.revision == 2, "the same values, typed: nothing written")

            // Per-field merge from the first revision: n changed since, label did not.
            let stale = try me.call("PATCH", path, json: ["n": 7, "revision": 1])
            #expect(stale.status == 409)
            #expect(stale.object["conflicting_fields"] as? [String] == ["n"])
            let merged = try me.call("PATCH", path, json: ["label": "kept", "revision": 1])
            #expect(merged.status == 200, "\(merged.text)")
            #expect(merged.object["label"] as? String == "kept")
            #expect(merged.object["n"] as? Int == 5)
            #expect(merged.object.revision == 3)
            #expect(try me.call("GET", path).object.revision == 3, "nothing else was written")
        }
    }
}
