@testable import Ferry
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 48: a JWT user is found by `GET /v1/users/lookup` through the claim
/// its provider names (`lookup_claim`, core 0029): a verified email, over real
/// sockets, with a test identity provider serving its keys over HTTP.
@Suite struct JWTUserLookupTests {
    /// A server whose one provider keeps `claim` as the lookup name (nil: the default, none).
    private func fixture(lookupClaim claim: String? = "email") throws -> JWTFixture {
        try JWTFixture { config in config.auth.jwtProviders[0].lookupClaim = claim }
    }

    /// A token of `subject` with these email claims (nil leaves a claim out); another
    /// `lifetime` makes another token of the same claims, which the cache has not seen.
    private func token(
        _ fixture: JWTFixture, _ subject: String, email: String?, verified: JSONValue? = .bool(true), lifetime: Int = 3600
    ) -> String {
        var extra: [(String, JSONValue)] = []
        if let email { extra.append(("email", .string(email))) }
        if let verified { extra.append(("email_verified", verified)) }
        return fixture.idp.token(subject: subject, lifetime: lifetime, extra: extra)
    }

    private func lookup(_ fixture: JWTFixture, _ name: String, as token: String) throws -> TestHTTPClient.Response {
        try fixture.call("GET", "/v1/users/lookup?name=\(name)", token: token)
    }

    @Test func aVerifiedEmailFindsItsUserInAnyCaseAndAnUnverifiedOneDoesNot() throws {
        let fixture = try fixture()
        defer { fixture.stop() }
        let alice = try #require(try fixture.userID(token(fixture, "alice-sub", email: "Alice@Example.com")))
        let bob = token(fixture, "bob-sub", email: "bob@example.com")
        let found = try lookup(fixture, "alice@example.com", as: bob)
        #expect(found.status == 200, "\(found.text)")
        #expect(found.object["id"] as? String == alice)
        #expect(found.object["name"] as? String == "Alice@Example.com", "the lookup name as the provider spelled it")
        #expect(try lookup(fixture, "ALICE@EXAMPLE.COM", as: bob).object["id"] as? String == alice)
        let nobody = try lookup(fixture, "nobody@example.com", as: bob)
        #expect(nobody.status == 404)
        // Unverified, or with no email_verified, or a non-boolean other than "true": not kept.
        let cases: [(String, JSONValue?)] = [("carol", .bool(false)), ("dan", nil), ("erin", .string("yes")), ("finn", .int(1))]
        for (subject, verified) in cases {
            #expect(try fixture.userID(token(fixture, subject, email: "\(subject)@example.com", verified: verified)) != nil)
            let miss = try lookup(fixture, "\(subject)@example.com", as: bob)
            #expect(miss.status == 404, "\(subject)")
            #expect(miss.body == nobody.body, "\(subject): byte for byte as nobody")
        }
        // Sign in with Apple sends email_verified as the string "true".
        let apple = try #require(try fixture.userID(token(fixture, "gus", email: "gus@example.com", verified: .string("true"))))
        #expect(try lookup(fixture, "gus@example.com", as: bob).object["id"] as? String == apple)
        // A prefix, or the subject, finds nobody.
        for near in ["alice", "alice@example", "alice-sub"] {
            #expect(try lookup(fixture, near, as: bob).body == nobody.body, "\(near)")
        }
    }

    @Test func aChangedEmailIsFollowedAndAnUnverifiedOneClearsTheOld() throws {
        let fixture = try fixture()
        defer { fixture.stop() }
        let bob = token(fixture, "bob", email: nil, verified: nil)
        let alice = try #require(try fixture.userID(token(fixture, "alice", email: "alice@old.example")))
        #expect(try lookup(fixture, "alice@old.example", as: bob).status == 200)
        #expect(try fixture.userID(token(fixture, "alice", email: "alice@new.example")) == alice)
        #expect(try lookup(fixture, "alice@old.example", as: bob).status == 404, "the old address is no longer hers")
        #expect(try lookup(fixture, "alice@new.example", as: bob).object["id"] as? String == alice)
        // Her provider now says the address is unverified: it is no longer kept.
        #expect(try fixture.userID(token(fixture, "alice", email: "alice@new.example", verified: .bool(false))) == alice)
        #expect(try lookup(fixture, "alice@new.example", as: bob).status == 404)
        // Verified again (a new token), it is found again.
        #expect(try fixture.userID(token(fixture, "alice", email: "alice@new.example", lifetime: 3000)) == alice)
        #expect(try lookup(fixture, "alice@new.example", as: bob).object["id"] as? String == alice)
    }

    @Test func twoUsersWithOneEmailAnswerAsNobody() throws {
        let fixture = try fixture()
        defer { fixture.stop() }
        let bob = token(fixture, "bob", email: nil, verified: nil)
        let nobody = try lookup(fixture, "nobody@example.com", as: bob)
        _ = try #require(try fixture.userID(token(fixture, "one", email: "same@example.com")))
        #expect(try lookup(fixture, "same@example.com", as: bob).status == 200)
        _ = try #require(try fixture.userID(token(fixture, "two", email: "SAME@example.com")))
        let both = try lookup(fixture, "same@example.com", as: bob)
        #expect(both.status == 404)
        #expect(both.body == nobody.body, "no answer tells that the address is taken")
        // A Ferry user named as another's lookup name makes two as well.
        _ = try fixture.server.user("taken@example.com")
        _ = try #require(try fixture.userID(token(fixture, "three", email: "taken@example.com")))
        #expect(try lookup(fixture, "taken@example.com", as: bob).body == nobody.body)
    }

    @Test func aProviderWithoutTheSettingKeepsNothing() throws {
        let fixture = try fixture(lookupClaim: nil)
        defer { fixture.stop() }
        let bob = token(fixture, "bob", email: nil, verified: nil)
        let alice = try #require(try fixture.userID(token(fixture, "alice", email: "alice@example.com")))
        #expect(try lookup(fixture, "alice@example.com", as: bob).status == 404)
        let stored = try fixture.server.ownerQuery("SELECT lookup_name FROM ferry.users WHERE id = $1", [alice])
        #expect(stored.rows.count == 1 && stored.first?[0] == nil)
    }

    @Test func anotherClaimMayBeTheLookupName() throws {
        let fixture = try fixture(lookupClaim: "preferred_username")
        defer { fixture.stop() }
        let bob = token(fixture, "bob", email: nil, verified: nil)
        let alice = try #require(
            try fixture.userID(fixture.idp.token(subject: "alice", extra: [("preferred_username", .string("alice.w"))])))
        #expect(try lookup(fixture, "alice.w", as: bob).object["id"] as? String == alice)
        // Its email is not the lookup name, verified or not.
        #expect(try fixture.userID(token(fixture, "carol", email: "carol@example.com")) != nil)
        #expect(try lookup(fixture, "carol@example.com", as: bob).status == 404)
    }

    @Test func theSettingIsParsedAndShown() throws {
        let text = #"[{"issuer": "https://idp", "audience": "app", "secret": "0123456789abcdef0123456789abcdef", "lookup_claim": "email"}]"#
        let providers = try JWTProvider.parseList(text).get()
        #expect(providers.first?.lookupClaim == "email")
        #expect(try JWTProvider.parseList(JWTProvider.jsonText(providers)).get() == providers)
        #expect(providers.first?.description.contains("lookup_claim: email") == true)
        let refused = JWTProvider.parseList(text.replacingOccurrences(of: #""email""#, with: "7"))
        #expect(refused == .failure(JWTProvider.ProviderError("[0].lookup_claim: expected a non-empty string")))
        #expect(try JWTProvider.parseList(text.replacingOccurrences(of: #", "lookup_claim": "email""#, with: "")).get().first?.lookupClaim == nil)
    }
}
