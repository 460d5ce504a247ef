import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The console's health figures and resources view, over HTTP.
@Suite struct ConsoleOverviewTests {
    @Test func healthIsAJSONTwinOfMetrics() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let user = try fixture.server.user("ann")
        let before = try fixture.console("GET", "/health").object
        for _ in 0..<5 { _ = try fixture.app("GET", "/v1/study_sets", token: user.token) }
        _ = try fixture.app("GET", "/v1/nope", token: user.token)
        let after = try fixture.console("GET", "/health").object
        let total = { (object: [String: Any]) in (object["requests"] as? [String: Any])?["total"] as? Int ?? -1 }
        let clientErrors = { (object: [String: Any]) in (object["requests"] as? [String: Any])?["client_errors"] as? Int ?? -1 }
        // Exactly the API's six; the console's own two calls are left out.
        #expect(total(after) - total(before) == 6)
        #expect(clientErrors(after) - clientErrors(before) == 1)
        let latency = try #require((after["requests"] as? [String: Any])?["latency"] as? [String: Any])
        #expect((latency["counts"] as? [Int])?.reduce(0, +) == total(after))
        #expect((after["memcached"] as? [String: Any])?["up"] as? Bool == true)
        #expect(((after["pool"] as? [String: Any])?["size"] as? Int ?? 0) > 0)
        let feed = try #require(after["feed"] as? [String: Any])
        #expect(feed["frontier"] is String && feed["lag_xids"] is Int)
        // The same figures as /metrics.
        let metrics = try fixture.server.client().request("GET", "/metrics").text
        #expect(metrics.contains("ferry_http_requests_total{route=\"/v1/:resource\",method=\"GET\",status=\"200\"} 5"))
    }

    @Test func resourcesShowColumnsRulesCountsAndRetention() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        let data = try fixture.console("GET", "/resources").object
        let resources = data["resources"] as? [[String: Any]] ?? []
        #expect(
            resources.compactMap { $0["name"] as? String } == [
                "class_members", "class_sets", "classes", "folder_sets", "folders", "set_collaborators", "study_sets", "terms",
            ])
        let terms = try #require(resources.first { $0["name"] as? String == "terms" })
        #expect(terms["ranked"] as? Bool == true && terms["rank_scope"] as? String == "set_id")
        let counts = (data["counts"] as? [String: Any])?["terms"] as? [String: Any] ?? [:]
        #expect(counts["rows"] as? Int == story.terms.count && counts["tombstones"] as? Int == 0)
        let collaborators = (data["counts"] as? [String: Any])?["set_collaborators"] as? [String: Any] ?? [:]
        #expect(collaborators["tombstones"] as? Int == 1)
        let rules = (data["rules"] as? [String: Any])?["terms"] as? [String: Any] ?? [:]
        #expect(rules["row_level_security"] as? Bool == true && !((rules["policies"] as? [Any]) ?? []).isEmpty)
        let scopes = data["access_scopes"] as? [[String: Any]] ?? []
        #expect(scopes.contains { $0["scope"] as? String == "study_sets" && $0["member"] as? String == "terms" })
        let retention = try #require(data["retention"] as? [String: Any])
        #expect(retention["tombstone_retention_days"] as? Int == 30)
        #expect((retention["feed"] as? [String: Any])?["purge_horizon"] as? String == "0")
    }
}
