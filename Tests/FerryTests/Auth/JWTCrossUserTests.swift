import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The cross-user tests with JWT identities: two providers configured at once,
/// whose equal `sub`s are two users, each seeing only its own rows.
@Suite struct JWTCrossUserTests {
    @Test func equalSubjectsOfTwoIssuersAreTwoUsersWhoNeverSeeEachOthersRows() throws {
        let fixture = try JWTFixture(providers: [try TestIdentityProvider(), try TestIdentityProvider()])
        defer { fixture.stop() }
        let alice = fixture.providers[0].token(subject: "alice")
        let otherAlice = fixture.providers[1].token(subject: "alice")
        let bob = fixture.providers[0].token(subject: "bob")
        let aliceID = try #require(try fixture.userID(alice))
        #expect(try fixture.userID(otherAlice) != aliceID, "the same sub from another issuer is another user")

        let set = try fixture.call("POST", "/v1/study_sets", token: alice, json: ["title": "secret"]).object
        let setID = try #require(set["id"] as? String)
        let term = try fixture.call("POST", "/v1/terms", token: alice, json: ["set_id": setID, "word": "w", "definition": "d"]).object
        let folder = try fixture.call("POST", "/v1/folders", token: alice, json: ["name": "F"]).object
        let link = try fixture.call("POST", "/v1/folder_sets", token: alice, json: ["folder_id": folder["id"] ?? "", "set_id": setID])
        #expect(link.status == 201, "\(link.text)")
        let rows = [
            ("study_sets", setID), ("terms", term["id"] as? String ?? ""), ("folders", folder["id"] as? String ?? ""),
            ("folder_sets", link.object["id"] as? String ?? ""),
        ]
        for intruder in [otherAlice, bob] {
            for (resource, id) in rows {
                let path = "/v1/\(resource)/\(id)"
                #expect(try fixture.call("GET", path, token: intruder).status == 404, "GET \(path)")
                #expect(try fixture.call("PATCH", path, token: intruder, json: ["revision": 1]).status == 404, "PATCH \(path)")
                #expect(try fixture.call("DELETE", path + "?revision=1", token: intruder).status == 404, "DELETE \(path)")
                let index = try fixture.call("GET", "/v1/\(resource)?id=\(id)", token: intruder).object
                #expect((index["data"] as? [Any])?.isEmpty == true, "Index \(resource)")
            }
            let changes = try fixture.call("GET", "/v1/changes", token: intruder).object
            #expect((changes["changes"] as? [Any])?.isEmpty == true, "the feed")
            let into = try fixture.call("POST", "/v1/terms", token: intruder, json: ["set_id": setID, "word": "x"])
            #expect(into.status == 422)
        }
        // Sharing names a JWT user by the id Ferry gave it; the collaborator then reads the set.
        let bobID = try #require(try fixture.userID(bob))
        let share = try fixture.call("POST", "/v1/set_collaborators", token: alice, json: ["set_id": setID, "user_id": bobID])
        #expect(share.status == 201, "\(share.text)")
        #expect(try fixture.call("GET", "/v1/study_sets/\(setID)", token: bob).status == 200)
        #expect(try fixture.call("GET", "/v1/study_sets/\(setID)", token: otherAlice).status == 404)
        let owners = try fixture.server.ownerQuery(
            "SELECT count(DISTINCT id), count(DISTINCT issuer) FROM ferry.users WHERE subject = 'alice'")
        #expect(owners.rows[0][0] == "2" && owners.rows[0][1] == "2")
    }
}
