@testable import Ferry
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 51: only access tokens open the API. A provider's ID tokens and
/// logout tokens are signed with the same keys and often name the same
/// audience; `typ` and the claims that mark them tell them apart
/// (``JWTTypeCheck``, `token_types` and `id_tokens` per provider).
@Suite struct JWTTypeTests {
    /// `claims` signed with the provider's RSA key under a header with `typ` (none when nil).
    static func token(_ idp: TestIdentityProvider, typ: String?, claims: [(String, JSONValue)]) throws -> String {
        let key = try #require(idp.key("rsa-1"))
        var header: [(String, JSONValue)] = [("alg", "RS256"), ("kid", "rsa-1")]
        if let typ { header.append(("typ", .string(typ))) }
        return TestIdentityProvider.sign(
            header: JSONValue.object(header).bytes, payload: JSONValue.object(claims).bytes,
            with: TestIdentityProvider.signer(key))
    }

    static func logoutClaims(_ idp: TestIdentityProvider) -> [(String, JSONValue)] {
        let now = Int(Date().timeIntervalSince1970)
        return [
            ("iss", .string(idp.issuer)), ("aud", .string(idp.audience)), ("sub", "alice"), ("iat", .int(now)),
            ("exp", .int(now + 120)), ("jti", "logout-1"),
            ("events", .object([("http://schemas.openid.net/event/backchannel-logout", .object([]))])),
        ]
    }

    @Test func accessTokensOfEveryCommonTypPassByDefault() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        for typ in ["at+jwt", "application/at+jwt", "AT+JWT", "JWT", "jwt", nil] as [String?] {
            let answer = try fixture.call("GET", "/v1/auth/me", token: try Self.token(idp, typ: typ, claims: idp.claims(subject: "alice")))
            #expect(answer.status == 200, "typ \(typ ?? "absent"): \(answer.text)")
        }
    }

    @Test func idTokensLogoutTokensAndOtherTypesAreRefused() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        let cases: [(String, String)] = [
            ("an ID token with a nonce", try Self.token(idp, typ: "JWT", claims: idp.claims(subject: "alice", extra: [("nonce", "n-0S6_WzA2Mj")]))),
            (
                "an ID token with at_hash",
                try Self.token(idp, typ: nil, claims: idp.claims(subject: "alice", extra: [("at_hash", "77QmUPtjPfzWtF2AnpK9RQ")]))
            ),
            ("Cognito's ID token", try Self.token(idp, typ: "JWT", claims: idp.claims(subject: "alice", extra: [("token_use", "id")]))),
            ("Keycloak's ID token", try Self.token(idp, typ: "JWT", claims: idp.claims(subject: "alice", extra: [("typ", "ID")]))),
            ("a logout token", try Self.token(idp, typ: "logout+jwt", claims: Self.logoutClaims(idp))),
            ("a logout token without typ", try Self.token(idp, typ: nil, claims: Self.logoutClaims(idp))),
            ("a DPoP proof's typ", try Self.token(idp, typ: "dpop+jwt", claims: idp.claims(subject: "alice"))),
        ]
        for (what, token) in cases {
            let answer = try fixture.call("GET", "/v1/auth/me", token: token)
            #expect(answer.status == 401, "\(what): \(answer.text)")
            #expect(answer.object["code"] as? String == "token_wrong_type", "\(what): \(answer.text)")
            #expect(answer.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        }
        // A typ that is not a string is not a well-formed token.
        let key = try #require(idp.key("rsa-1"))
        let numeric = TestIdentityProvider.sign(
            header: Array(#"{"alg":"RS256","kid":"rsa-1","typ":1}"#.utf8),
            payload: JSONValue.object(idp.claims(subject: "alice")).bytes, with: TestIdentityProvider.signer(key))
        #expect(try fixture.call("GET", "/v1/auth/me", token: numeric).object["code"] as? String == "token_malformed")
        let users = try fixture.server.ownerQuery("SELECT count(*) FROM ferry.users WHERE subject = 'alice'")
        #expect(users.rows[0][0] == "0", "nothing refused made a user")
    }

    /// A provider whose apps send ID tokens (Firebase, Cognito) says so; a
    /// strict one accepts `at+jwt` alone. Logout tokens stay refused.
    @Test func tokenTypesAndIDTokensArePerProvider() throws {
        let lenient = try TestIdentityProvider()
        let strict = try TestIdentityProvider()
        let fixture = try JWTFixture(providers: [lenient, strict]) { config in
            config.auth.jwtProviders[0].idTokens = true
            config.auth.jwtProviders[1].tokenTypes = ["at+jwt"]
        }
        defer { fixture.stop() }
        let idToken = try Self.token(lenient, typ: "JWT", claims: lenient.claims(subject: "alice", extra: [("nonce", "n")]))
        #expect(try fixture.call("GET", "/v1/auth/me", token: idToken).status == 200)
        let logout = try fixture.call("GET", "/v1/auth/me", token: try Self.token(lenient, typ: "logout+jwt", claims: Self.logoutClaims(lenient)))
        #expect(logout.object["code"] as? String == "token_wrong_type")
        #expect(
            try fixture.call("GET", "/v1/auth/me", token: try Self.token(strict, typ: "at+jwt", claims: strict.claims(subject: "s"))).status == 200)
        for typ in ["JWT", nil] as [String?] {
            let answer = try fixture.call("GET", "/v1/auth/me", token: try Self.token(strict, typ: typ, claims: strict.claims(subject: "s")))
            #expect(answer.object["code"] as? String == "token_wrong_type", "typ \(typ ?? "absent")")
        }
    }

    @Test func theSettingsAreReadAndRefusedNamingTheMember() {
        let base = #""issuer": "i", "audience": "a", "jwks_url": "https://x/j""#
        guard case .success(let providers) = JWTProvider.parseList(#"[{\#(base), "token_types": ["at+jwt", null], "id_tokens": true}]"#) else {
            Issue.record("refused")
            return
        }
        #expect(providers[0].tokenTypes == ["at+jwt", nil] && providers[0].idTokens)
        guard case .success(let defaults) = JWTProvider.parseList("[{\(base)}]") else { return }
        #expect(defaults[0].tokenTypes == ["at+jwt", "JWT", nil] && !defaults[0].idTokens)
        for bad in [#""token_types": []"#, #""token_types": "JWT""#, #""token_types": [1]"#, #""id_tokens": "yes""#] {
            guard case .failure(let error) = JWTProvider.parseList("[{\(base), \(bad)}]") else {
                Issue.record("\(bad) was accepted")
                continue
            }
            #expect(error.reason.hasPrefix("[0].token_types") || error.reason.hasPrefix("[0].id_tokens"), "\(error.reason)")
        }
        // The list written back reads the same.
        guard case .success(let again) = JWTProvider.parseList(JWTProvider.jsonText(providers)) else { return }
        #expect(again == providers)
    }
}
