@testable import Ferry
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 36: JWTs from an identity provider, verified against its JWKS served
/// by a test provider over HTTP, with keys that rotate.
@Suite struct JWTSignInTests {
    @Test func aValidTokenOfEachAlgorithmSignsInAndItsUserOwnsWhatItCreates() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        var ids = Set<String>()
        for kid in ["rsa-1", "ec-1", "ed-1"] {
            let token = idp.token(subject: "alice", kid: kid)
            let me = try fixture.call("GET", "/v1/auth/me", token: token)
            #expect(me.status == 200, "\(kid): \(me.text)")
            if let id = me.object["id"] as? String { ids.insert(id) }
            #expect(me.object["name"] is NSNull, "a user from a JWT has no name")
        }
        #expect(ids.count == 1, "one subject, one user, whatever key signed")
        let token = idp.token(subject: "alice")
        let set = try fixture.call("POST", "/v1/study_sets", token: token, json: ["title": "mine"])
        #expect(set.status == 201, "\(set.text)")
        #expect(set.object["creator_id"] as? String == ids.first)
        // The same token again is served from the verification cache.
        #expect(try fixture.call("GET", "/v1/study_sets/\(set.object["id"] as? String ?? "")", token: token).status == 200)
        #expect(fixture.server.app.database.jwts.count >= 1)
    }

    /// The provider's clock half a minute off either way is within the default 60 s leeway.
    @Test func theProvidersClockSkewIsTolerated() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        let rsa = try #require(idp.key("rsa-1"))
        let now = Int(Date().timeIntervalSince1970)
        let ahead = idp.claims(subject: "skew").filter { !["iat", "nbf"].contains($0.0) } + [("iat", .int(now + 30)), ("nbf", .int(now + 30))]
        #expect(try fixture.call("GET", "/v1/auth/me", token: idp.sign(claims: ahead, with: rsa)).status == 200)
        let behind = idp.claims(subject: "skew").filter { $0.0 != "exp" } + [("exp", .int(now - 30))]
        #expect(try fixture.call("GET", "/v1/auth/me", token: idp.sign(claims: behind, with: rsa)).status == 200)
    }

    /// Every bad token of the issue's list: 401 problem+json with a stable code, never a 5xx.
    @Test func eachBadTokenGetsA401WithItsCode() throws {
        let fixture = try JWTFixture { $0.auth.jwksMinRefetchSeconds = 30 }
        defer { fixture.stop() }
        let idp = fixture.idp
        let rsa = try #require(idp.key("rsa-1"))
        let now = Int(Date().timeIntervalSince1970)
        func claims(_ change: (inout [(String, JSONValue)]) -> Void) -> [(String, JSONValue)] {
            var claims = idp.claims(subject: "mallory")
            change(&claims)
            return claims
        }
        func replacing(_ name: String, _ value: JSONValue) -> (inout [(String, JSONValue)]) -> Void {
            { claims in claims = claims.filter { $0.0 != name } + [(name, value)] }
        }
        let valid = idp.token(subject: "mallory")
        let header = { (alg: String) in JSONValue.object([("alg", .string(alg)), ("typ", "JWT"), ("kid", "rsa-1")]).bytes }
        let payload = JSONValue.object(idp.claims(subject: "mallory")).bytes
        let ghost = try idp.unpublishedKey(kid: "ghost")
        let cases: [(String, String, String)] = [
            ("expired", idp.sign(claims: claims(replacing("exp", .int(now - 3600))), with: rsa), "token_expired"),
            ("not yet valid", idp.sign(claims: claims(replacing("nbf", .int(now + 3600))), with: rsa), "token_not_yet_valid"),
            ("issued in the future", idp.sign(claims: claims(replacing("iat", .int(now + 3600))), with: rsa), "token_not_yet_valid"),
            ("wrong iss", idp.sign(claims: claims(replacing("iss", "https://elsewhere.test")), with: rsa), "token_unknown_issuer"),
            ("wrong aud", idp.sign(claims: claims(replacing("aud", "another-app")), with: rsa), "token_wrong_audience"),
            ("no aud", idp.sign(claims: claims { $0.removeAll { $0.0 == "aud" } }, with: rsa), "token_wrong_audience"),
            ("unknown kid", idp.sign(claims: idp.claims(subject: "mallory"), with: ghost), "token_unknown_key"),
            ("alg none", TestIdentityProvider.sign(header: header("none"), payload: payload, with: nil), "token_algorithm_refused"),
            (
                "alg none, signed", TestIdentityProvider.sign(header: header("none"), payload: payload, with: TestIdentityProvider.signer(rsa)),
                "token_algorithm_refused"
            ),
            (
                "HS256 with the RSA public key as the secret",
                TestIdentityProvider.sign(
                    header: header("HS256"), payload: payload,
                    with: TestIdentityProvider.hmacSigner(Array(rsa.publicPEM.utf8))), "token_algorithm_refused"
            ),
            (
                "RS512, an algorithm Ferry does not verify",
                TestIdentityProvider.sign(header: header("RS512"), payload: payload, with: TestIdentityProvider.signer(rsa)),
                "token_algorithm_refused"
            ),
            (
                "truncated signature",
                TestIdentityProvider.sign(
                    header: header("RS256"), payload: payload,
                    with: { Array(TestIdentityProvider.signer(rsa)($0).dropLast(16)) }),
                "token_bad_signature"
            ),
            (
                "another key's signature",
                TestIdentityProvider.sign(
                    header: header("RS256"), payload: payload,
                    with: TestIdentityProvider.signer(ghost)), "token_bad_signature"
            ),
            (
                "oversized", idp.sign(claims: claims { $0.append(("pad", .string(String(repeating: "x", count: 9000)))) }, with: rsa),
                "token_too_large"
            ),
            (
                "header not JSON",
                TestIdentityProvider.sign(
                    header: Array("not json".utf8), payload: payload,
                    with: TestIdentityProvider.signer(rsa)), "token_malformed"
            ),
            (
                "payload not an object",
                TestIdentityProvider.sign(
                    header: header("RS256"), payload: Array("[1]".utf8),
                    with: TestIdentityProvider.signer(rsa)), "token_malformed"
            ),
            ("two parts", valid.split(separator: ".").prefix(2).joined(separator: "."), "token_malformed"),
            ("padded base64", valid.replacingOccurrences(of: ".", with: "=."), "token_malformed"),
            ("exp a string", idp.sign(claims: claims(replacing("exp", "tomorrow")), with: rsa), "token_invalid_claim"),
            ("sub a number", idp.sign(claims: claims(replacing("sub", 42)), with: rsa), "token_invalid_claim"),
            ("aud an object", idp.sign(claims: claims(replacing("aud", .object([("x", 1)]))), with: rsa), "token_invalid_claim"),
            ("no exp", idp.sign(claims: claims { $0.removeAll { $0.0 == "exp" } }, with: rsa), "token_invalid_claim"),
            ("a claim holding U+0000", idp.sign(claims: claims { $0.append(("name", "a\u{0}b")) }, with: rsa), "token_malformed"),
            (
                "nested too deep",
                idp.sign(
                    claims: claims {
                        $0.append(("deep", JSONValue.raw(Array((String(repeating: "[", count: 40) + String(repeating: "]", count: 40)).utf8))))
                    }, with: rsa),
                "token_malformed"
            ),
        ]
        for (what, token, code) in cases {
            for path in ["/v1/auth/me", "/v1/study_sets"] {
                // The unknown kid's first request starts a fetch and gets 503 at once; its retry the 401.
                let answer = try fixture.callSettled("GET", path, token: token)
                #expect(answer.status == 401, "\(what) on \(path): \(answer.status) \(answer.text)")
                #expect(answer.header("Content-Type")?.hasPrefix("application/problem+json") == true, "\(what)")
                #expect(answer.object["code"] as? String == code, "\(what) on \(path): \(answer.text)")
                #expect(answer.header("WWW-Authenticate")?.hasPrefix("Bearer") == true, "\(what)")
                #expect(!answer.text.contains(token), "\(what): the answer repeats the token")
            }
        }
        // Nothing refused made a user.
        let users = try fixture.server.ownerQuery("SELECT count(*) FROM ferry.users WHERE subject = 'mallory'")
        #expect(users.rows[0][0] == "0")
        // The unknown kid cost one fetch, not one per request: the rate limit holds the rest.
        #expect(idp.fetches == 2, "the start's fetch and one refetch for the unknown kid, got \(idp.fetches)")
        #expect(try fixture.call("GET", "/v1/auth/me", token: valid).status == 200)
    }

    /// A key published after start (a rotation): the first token it signs starts
    /// one fetch of the JWKS, however many requests carry it at once; they are
    /// answered 503 `jwks_unavailable` with `Retry-After: 1` meanwhile, never
    /// held, and their retries verify.
    @Test func anUnknownKidIsFixedByOneRefetch() throws {
        let fixture = try JWTFixture { $0.auth.jwksMinRefetchSeconds = 30 }
        defer { fixture.stop() }
        let idp = fixture.idp
        #expect(idp.fetches == 1)
        try idp.rotate(kid: "rsa-2", replacing: true)
        let tokens = (0..<8).map { idp.token(subject: "user\($0)", kid: "rsa-2") }
        let answers = Locked([(Int, String?)]())
        DispatchQueue.concurrentPerform(iterations: tokens.count) { index in
            let answer = try? fixture.call("GET", "/v1/auth/me", token: tokens[index])
            answers.withLock { $0.append((answer?.status ?? 0, answer?.header("Retry-After"))) }
        }
        for (status, retryAfter) in answers.withLock({ $0 }) {
            #expect(status == 200 || (status == 503 && retryAfter == "1"), "\(status)")
        }
        fixture.waitForFetches(issuer: idp.issuer)
        for token in tokens { #expect(try fixture.call("GET", "/v1/auth/me", token: token).status == 200) }
        #expect(idp.fetches == 2, "one fetch after the rotation, got \(idp.fetches)")
        // The retired key's new tokens are refused.
        let retired = idp.sign(claims: idp.claims(subject: "late"), with: try idp.unpublishedKey(kid: "rsa-1"))
        #expect(try fixture.call("GET", "/v1/auth/me", token: retired).object["code"] as? String == "token_unknown_key")
    }

    /// The provider down: the keys held keep serving within the grace period;
    /// past it, a clear 503; back up, tokens verify again.
    @Test func aDownProviderIsSurvivedWithinTheGracePeriodThenA503() throws {
        let fixture = try JWTFixture {
            $0.auth.jwksRefreshSeconds = 1
            $0.auth.jwksGraceSeconds = 1
            $0.auth.jwksMinRefetchSeconds = 0
        }
        defer { fixture.stop() }
        let idp = fixture.idp
        let cached = idp.token(subject: "cached")
        #expect(try fixture.call("GET", "/v1/auth/me", token: cached).status == 200)
        idp.setDown(true)
        #expect(try fixture.call("GET", "/v1/auth/me", token: idp.token(subject: "within-grace")).status == 200)
        // Real time must pass: the keys age past refresh + grace (2 s) while the provider stays down.
        Thread.sleep(forTimeInterval: 2.5)
        let late = try fixture.call("GET", "/v1/auth/me", token: idp.token(subject: "past-grace"))
        #expect(late.status == 503, "\(late.text)")
        #expect(late.object["code"] as? String == "jwks_unavailable")
        #expect(late.header("Retry-After") != nil)
        // A token verified before ends with its key set's grace too (issue 51).
        #expect(try fixture.call("GET", "/v1/auth/me", token: cached).status == 503)
        idp.setDown(false)
        #expect(try fixture.callSettled("GET", "/v1/auth/me", token: idp.token(subject: "back")).status == 200)
        #expect(try fixture.callSettled("GET", "/v1/auth/me", token: cached).status == 200)
    }

    /// A user is created on first sight exactly once, however many first requests race.
    @Test func concurrentFirstRequestsMakeOneUser() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        // Distinct tokens (each its own jti), so that none is served from the cache.
        let tokens = (0..<12).map { idp.token(subject: "racer", extra: [("jti", .string("t\($0)"))]) }
        let ids = Locked([String]())
        DispatchQueue.concurrentPerform(iterations: tokens.count) { index in
            let answer = try? fixture.call("POST", "/v1/study_sets", token: tokens[index], json: ["title": "set \(index)"])
            ids.withLock { $0.append(answer?.object["creator_id"] as? String ?? "status \(answer?.status ?? 0)") }
        }
        #expect(Set(ids.withLock { $0 }).count == 1, "\(ids.withLock { $0 })")
        let users = try fixture.server.ownerQuery("SELECT count(*) FROM ferry.users WHERE subject = 'racer'")
        #expect(users.rows[0][0] == "1")
    }

    /// With JWTs only, Ferry's own sign-in is gone: 404, and the OpenAPI document does not offer it.
    @Test func jwtsOnlyTurnFerrysOwnTokensOff() throws {
        let fixture = try JWTFixture { $0.auth.builtinTokens = false }
        defer { fixture.stop() }
        let client = fixture.server.client()
        let user = try fixture.server.user("local")
        for method in ["POST", "DELETE", "GET"] {
            let answer = try client.request(method, "/v1/auth/token", headers: [("Authorization", "Basic bG9jYWw6Y29ycmVjdC1ob3JzZQ==")])
            #expect(answer.status == 404, "\(method) /v1/auth/token: \(answer.status)")
        }
        #expect(try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(user.token)")]).status == 401)
        #expect(try fixture.call("GET", "/v1/auth/me", token: fixture.idp.token(subject: "sso")).status == 200)
        let document = try client.request("GET", "/openapi.json").text
        #expect(!document.contains("/v1/auth/token"))
        #expect(document.contains("token_expired"))
    }

    /// Side by side: a Ferry token and a JWT on one server.
    @Test func ferryTokensAndJWTsWorkSideBySide() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let user = try fixture.server.user("local")
        let client = fixture.server.client()
        #expect(try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(user.token)")]).object["id"] as? String == user.id)
        let jwt = fixture.idp.token(subject: "sso")
        #expect(try fixture.userID(jwt) != user.id)
        #expect(try fixture.call("DELETE", "/v1/auth/token", token: jwt).status == 400)
        let document = try client.request("GET", "/openapi.json").text
        #expect(document.contains("/v1/auth/token"))
        #expect(document.contains(fixture.idp.issuer))
    }

    /// Without providers, a JWT is just a token Ferry does not know.
    @Test func withoutProvidersAJWTIsUnauthorized() throws {
        let idp = try TestIdentityProvider()
        defer { idp.stop() }
        let server = try TestServer()
        defer { server.stop() }
        let answer = try server.client().request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(idp.token(subject: "x"))")])
        #expect(answer.status == 401)
        #expect(answer.object["code"] as? String == "unauthorized")
    }
}
