import Foundation
import Testing
import FerryTestSupport

/// `GET /v1/users/lookup?name=` (issue 48): finding the user to share with by
/// exact name, over real sockets, without becoming a list of who exists.
@Suite struct UserLookupTests {
    private func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    @Test func anExactNameFindsItsUserAndNothingElseDoes() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let bob = try server.user("bob.smith")
        let client = server.client()
        let found = try client.request("GET", "/v1/users/lookup?name=bob.smith", headers: bearer(alice.token))
        #expect(found.status == 200)
        #expect(found.object["id"] as? String == bob.id)
        #expect(found.object["name"] as? String == "bob.smith")
        #expect(found.header("Cache-Control") == "private, no-store")
        // A prefix, another case, a longer name and no user at all: one answer, byte for byte.
        let nobody = try client.request("GET", "/v1/users/lookup?name=nobody", headers: bearer(alice.token))
        #expect(nobody.status == 404)
        #expect(nobody.object["code"] as? String == "not_found")
        for near in ["bob", "Bob.smith", "bob.smith2", "bob.smit"] {
            let miss = try client.request("GET", "/v1/users/lookup?name=\(near)", headers: bearer(alice.token))
            #expect(miss.status == 404, "\(near)")
            #expect(miss.body == nobody.body, "\(near)")
        }
    }

    @Test func aPatternIsNoNameAndTheQueryIsChecked() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        _ = try server.user("bob")
        let client = server.client()
        for query in ["name=b%25", "name=b*", "name=", "name=.bob", "", "name=bob&name=bob", "name=bob&limit=5", "search=b"] {
            let response = try client.request("GET", "/v1/users/lookup?\(query)", headers: bearer(alice.token))
            #expect(response.status == 400, "\(query)")
            #expect(response.object["code"] as? String == "invalid_query", "\(query)")
        }
    }

    @Test func onlyASignedInCallerMayAsk() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.user("bob")
        let client = server.client()
        for query in ["name=bob", "name=b*"] {
            for headers in [[], bearer(String(repeating: "A", count: 43))] {
                let response = try client.request("GET", "/v1/users/lookup?\(query)", headers: headers)
                #expect(response.status == 401, "\(query) \(headers)")
                #expect(response.object["code"] as? String == "unauthorized")
            }
        }
    }

    @Test func eachCallerHasThirtyQuestionsInTenMinutes() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let carol = try server.user("carol")
        let bob = try server.user("bob")
        let client = server.client()
        // Found or not, every question counts.
        for index in 0..<30 {
            let name = index % 2 == 0 ? "bob" : "guess\(index)"
            let response = try client.request("GET", "/v1/users/lookup?name=\(name)", headers: bearer(alice.token))
            #expect(response.status == (index % 2 == 0 ? 200 : 404), "\(index)")
        }
        let spent = try client.request("GET", "/v1/users/lookup?name=bob", headers: bearer(alice.token))
        #expect(spent.status == 429)
        #expect(spent.object["code"] as? String == "rate_limited")
        let retry = Int(spent.header("Retry-After") ?? "") ?? 0
        #expect((1...600).contains(retry))
        // Another caller's ration is their own.
        let other = try client.request("GET", "/v1/users/lookup?name=bob", headers: bearer(carol.token))
        #expect(other.status == 200)
        #expect(other.object["id"] as? String == bob.id)
        // Once the window has passed, the caller may ask again.
        _ = try server.ownerQuery(
            "UPDATE ferry.user_lookups SET window_start = now() - interval '10 minutes 1 second' WHERE user_id = $1", [alice.id])
        let again = try client.request("GET", "/v1/users/lookup?name=bob", headers: bearer(alice.token))
        #expect(again.status == 200)
    }
}
