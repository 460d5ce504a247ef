import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Each user's refused writes and feed polls are recorded with their
/// problem+json, off the request's path, bounded per user.
@Suite struct ConsoleRefusalTests {
    @Test func refusedWritesAndPollsAreRecordedWithTheirProblem() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        // A stale revision (409), a write to a set he can no longer read (404), a bad cursor (400).
        let term = story.terms[0]
        _ = try fixture.app("PATCH", "/v1/terms/\(term)", token: story.owner.token, json: ["revision": 1, "word": "one"])
        let conflict = try fixture.app(
            "PUT", "/v1/terms/\(term)", token: story.owner.token,
            json: ["revision": 1, "set_id": story.set, "word": "two"])
        #expect(conflict.status == 409)
        #expect(
            try fixture.app(
                "PATCH", "/v1/study_sets/\(story.set)", token: story.friend.token,
                json: ["revision": 1, "title": "mine"]
            ).status == 404)
        #expect(try fixture.app("GET", "/v1/changes?since=1garbage", token: story.friend.token).status == 400)
        // Not recorded: successes, reads other than the feed, other users' refusals stay theirs.
        #expect(try fixture.app("GET", "/v1/terms/\(UUID().uuidString)", token: story.friend.token).status == 404)

        let owner = try fixture.waitForRefusals(story.owner.id, count: 1)
        #expect(owner.count == 1)
        #expect(owner[0]["status"] as? Int == 409 && owner[0]["code"] as? String == "revision_conflict")
        #expect(owner[0]["method"] as? String == "PUT" && owner[0]["path"] as? String == "/v1/terms/\(term)")
        let problem = try #require(owner[0]["problem"] as? [String: Any])
        #expect((problem["current"] as? [String: Any])?["word"] as? String == "one")

        let friend = try fixture.waitForRefusals(story.friend.id, count: 2)
        #expect(friend.count == 2)
        #expect(friend.map { $0["code"] as? String } == ["invalid_query", "not_found"])
        #expect(friend[0]["path"] as? String == "/v1/changes?since=1garbage")
    }

    /// A device whose token was revoked keeps trying: its 401s are the user's too.
    @Test func aRevokedTokensRequestsAreTheUsers() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let user = try fixture.server.user("lee")
        _ = try fixture.server.ownerQuery("UPDATE ferry.tokens SET revoked = true WHERE user_id = $1", [user.id])
        #expect(try fixture.app("POST", "/v1/study_sets", token: user.token, json: ["title": "x"]).status == 401)
        let refusals = try fixture.waitForRefusals(user.id, count: 1)
        #expect(refusals.first?["status"] as? Int == 401)
    }

    @Test func eachUserKeepsTheLatestFifty() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let user = try fixture.server.user("max")
        for index in 0..<60 {
            _ = try fixture.app("PATCH", "/v1/terms/\(UUID().uuidString)?n=\(index)", token: user.token, json: ["revision": 1])
        }
        let refusals = try fixture.waitForRefusals(user.id, count: 50)
        #expect(refusals.count == 50)
        _ = eventually(within: 5) {
            (try? fixture.server.ownerQuery("SELECT count(*) FROM ferry.refused_requests").rows[0][0]) == "50"
        }
        #expect(try fixture.server.ownerQuery("SELECT count(*) FROM ferry.refused_requests WHERE user_id = $1", [user.id]).rows[0][0] == "50")
    }

    @Test func nothingIsRecordedWhenTheConsoleIsOff() throws {
        let server = try TestServer { $0.console.enabled = false }
        defer { server.stop() }
        let user = try server.user("ned")
        #expect(
            try server.client().request(
                "PATCH", "/v1/terms/\(UUID().uuidString)", headers: [("Authorization", "Bearer \(user.token)")],
                json: ["revision": 1]
            ).status == 404)
        #expect(try server.client().request("GET", "/console/").status == 404)
        #expect(try server.client().request("GET", "/console/api/resources").status == 404)
        Thread.sleep(forTimeInterval: 0.5)  // longer than the recorder's flush delay: nothing may arrive
        #expect(try server.ownerQuery("SELECT count(*) FROM ferry.refused_requests").rows[0][0] == "0")
        let paths = try server.client().request("GET", "/openapi.json").object["paths"] as? [String: Any] ?? [:]
        #expect(!paths.keys.contains { $0.hasPrefix("/console") })
    }
}
