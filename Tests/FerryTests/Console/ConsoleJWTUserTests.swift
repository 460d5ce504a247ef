@testable import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The console's page of a user from an identity provider's JWT (issue 48,
/// core 0029), over real sockets: it opens (such a user has no name), shows the
/// name others find them by, and their last request, recorded off the request
/// path for cached JWTs too; and the user list finds them by that name.
@Suite struct ConsoleJWTUserTests {
    @Test func aJWTUsersPageShowsTheirLookupNameAndLastRequest() throws {
        let idp = try TestIdentityProvider()
        defer { idp.stop() }
        let fixture = try ConsoleFixture { config in
            var provider = JWTFixture.provider(idp)
            provider.lookupClaim = "email"
            config.auth.jwtProviders = [provider]
        }
        defer { fixture.stop() }
        let token = idp.token(subject: "june", extra: [("email", .string("june@example.com")), ("email_verified", .bool(true))])
        let signedIn = Int(Date().timeIntervalSince1970 * 1000) - 1_000
        let first = try fixture.app("GET", "/v1/auth/me", token: token)
        #expect(first.status == 200, "\(first.text)")
        let id = try #require(first.object["id"] as? String)
        func user() throws -> [String: Any] {
            let page = try fixture.console("GET", "/users/\(id)")
            #expect(page.status == 200, "\(page.text)")
            return page.object["user"] as? [String: Any] ?? [:]
        }
        #expect(try user()["name"] as? String == "june@example.com", "shown by the name others find them by")
        #expect(try user()["lookup_name"] as? String == "june@example.com")
        // The list finds her by part of it, as it finds a Ferry user by part of the name.
        let listed = try fixture.console("GET", "/users?search=JUNE@exa").object["users"] as? [[String: Any]] ?? []
        #expect(listed.map { $0["id"] as? String } == [id] && listed.first?["name"] as? String == "june@example.com", "\(listed)")
        let seen = try waitFor("the JWT user's request to be written", within: 60) { try user()["last_used_at"] as? Int }
        #expect(seen >= signedIn)
        #expect(seen <= Int(Date().timeIntervalSince1970 * 1000) + 1_000)
        // Later requests with the same JWT come from the cache of verified JWTs; they are recorded too.
        let later = seen + 1
        try waitUntil("a millisecond to pass", within: 5) { Int(Date().timeIntervalSince1970 * 1000) > later }
        #expect(try fixture.app("GET", "/v1/auth/me", token: token).status == 200)
        let again = try waitFor("the cached JWT's request to be written", within: 60) { () -> Int? in
            guard let at = try user()["last_used_at"] as? Int, at > seen else { return nil }
            return at
        }
        #expect(again > seen)
        // A Ferry user has neither.
        let local = try fixture.server.user("kit")
        let page = try fixture.console("GET", "/users/\(local.id)").object["user"] as? [String: Any] ?? [:]
        #expect(page["lookup_name"] is NSNull && page["last_used_at"] is NSNull)
    }
}
