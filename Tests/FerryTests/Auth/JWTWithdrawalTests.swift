@testable import Ferry
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 51: a key the provider withdraws stops working at once, for tokens
/// verified before (cached) as for new ones, when Ferry next fetches the key
/// set: the scheduled refresh, or at once on SIGHUP (``FerryApp/reload()``).
@Suite struct JWTWithdrawalTests {
    /// Runs `body` (which starts fetches) and returns once one more of `issuer`'s fetches finished.
    func afterAFetch(_ fixture: JWTFixture, _ body: () -> Void) {
        let verifier = fixture.verifier
        let issuer = fixture.idp.issuer
        let finished = verifier.finishedFetches(issuer: issuer)
        body()
        #expect(eventually(within: 60) { verifier.finishedFetches(issuer: issuer) > finished })
    }

    @Test func aKeyWithdrawnEndsItsCachedTokensOnSIGHUP() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        let compromised = idp.token(subject: "alice", kid: "rsa-1")
        let kept = idp.token(subject: "bob", kid: "ec-1")
        #expect(try fixture.call("GET", "/v1/auth/me", token: compromised).status == 200)
        #expect(try fixture.call("GET", "/v1/auth/me", token: kept).status == 200)
        #expect(fixture.server.app.database.jwts.count == 2, "both verified and cached")
        // The provider replaces rsa-1 with rsa-2; the operator sends SIGHUP.
        idp.withdraw(kid: "rsa-1")
        try idp.rotate(kid: "rsa-2")
        afterAFetch(fixture) { fixture.server.app.reload() }
        // Its first use may start a fetch for the unknown kid (503 at once); settled, a 401.
        let refused = try fixture.callSettled("GET", "/v1/auth/me", token: compromised)
        #expect(refused.status == 401, "\(refused.text)")
        #expect(refused.object["code"] as? String == "token_unknown_key")
        #expect(try fixture.call("GET", "/v1/auth/me", token: idp.token(subject: "alice", kid: "rsa-2")).status == 200)
        #expect(try fixture.call("GET", "/v1/auth/me", token: kept).status == 200, "the other keys' tokens stay")
    }

    @Test func onlyTheWithdrawnKeysTokensLeaveTheCache() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        let byRSA = idp.token(subject: "alice", kid: "rsa-1")
        let byEC = idp.token(subject: "bob", kid: "ec-1")
        #expect(try fixture.call("GET", "/v1/auth/me", token: byRSA).status == 200)
        #expect(try fixture.call("GET", "/v1/auth/me", token: byEC).status == 200)
        #expect(fixture.server.app.database.jwts.count == 2)
        idp.withdraw(kid: "rsa-1")
        afterAFetch(fixture) { fixture.verifier.refetchKeys() }
        #expect(fixture.server.app.database.jwts.count == 1, "the EC key's token stays cached")
        #expect(try fixture.callSettled("GET", "/v1/auth/me", token: byRSA).object["code"] as? String == "token_unknown_key")
        #expect(try fixture.call("GET", "/v1/auth/me", token: byEC).status == 200)
    }

    /// A `kid` reused for new key material: the old key is withdrawn all the same.
    @Test func aKidReusedForANewKeyWithdrawsTheOldOne() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let idp = fixture.idp
        let old = idp.token(subject: "alice", kid: "rsa-1")
        #expect(try fixture.call("GET", "/v1/auth/me", token: old).status == 200)
        idp.withdraw(kid: "rsa-1")
        try idp.rotate(kid: "rsa-1")
        afterAFetch(fixture) { fixture.verifier.refetchKeys() }
        #expect(try fixture.call("GET", "/v1/auth/me", token: old).object["code"] as? String == "token_bad_signature")
        #expect(try fixture.call("GET", "/v1/auth/me", token: idp.token(subject: "alice", kid: "rsa-1")).status == 200)
    }
}
