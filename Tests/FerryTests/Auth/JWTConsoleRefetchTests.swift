@testable import Ferry
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 51, item 3: an operator forces a refetch of every provider's keys
/// from the console (`POST /console/api/jwks/refetch`): admins only, confirmed,
/// audited like the console's other writes; a key the provider withdrew is
/// refused, its cached tokens with it, by the time the answer arrives.
@Suite struct JWTConsoleRefetchTests {
    /// A JWT server with an admin and a viewer operator.
    struct Fixture {
        let jwt: JWTFixture
        let admin: String
        let viewer: String

        init(_ configure: (inout FerryConfiguration) -> Void = { _ in }) throws {
            jwt = try JWTFixture { config in
                // No scheduled refresh within the test: only the console fetches.
                config.auth.jwksRefreshSeconds = 3_600
                configure(&config)
            }
            admin = try ConsoleFixture.operatorToken(jwt.server, name: "dana", role: "admin")
            viewer = try ConsoleFixture.operatorToken(jwt.server, name: "vic", role: "viewer")
        }

        func refetch(token: String? = nil, json: Any? = ["confirm": true]) throws -> TestHTTPClient.Response {
            try jwt.server.client().request(
                "POST", "/console/api/jwks/refetch", headers: [("Authorization", "Bearer \(token ?? admin)")], json: json)
        }

        func audit() throws -> [String] {
            let entries =
                try jwt.server.client().request("GET", "/console/api/audit", headers: [("Authorization", "Bearer \(admin)")])
                .object["entries"] as? [[String: Any]] ?? []
            return entries.map { "\($0["operator"] as? String ?? "") \($0["action"] as? String ?? "") \($0["status"] as? Int ?? 0)" }
        }
    }

    @Test func theConsoleRefetchEndsAWithdrawnKeyBeforeItAnswers() throws {
        let fixture = try Fixture()
        defer { fixture.jwt.stop() }
        let idp = fixture.jwt.idp
        let compromised = idp.token(subject: "alice", kid: "rsa-1")
        let kept = idp.token(subject: "bob", kid: "ec-1")
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: compromised).status == 200)
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: kept).status == 200)
        let fetchesBefore = idp.fetches
        let rsa1 = try #require(idp.key("rsa-1"))

        // The provider withdraws rsa-1. Ferry has not fetched since: the cached token still works.
        idp.withdraw(kid: "rsa-1")
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: compromised).status == 200)

        let answer = try fixture.refetch()
        #expect(answer.status == 200, "\(answer.text)")
        let providers = answer.object["providers"] as? [[String: Any]] ?? []
        #expect(providers.count == 1)
        #expect(providers.first?["issuer"] as? String == idp.issuer)
        #expect(providers.first?["status"] as? String == "fetched", "\(answer.text)")
        #expect(providers.first?["withdrawn"] as? Int == 1)
        #expect(providers.first?["keys"] as? Int == idp.keys.count)
        #expect(idp.fetches == fetchesBefore + 1)
        // Refused at once: no fetch had to finish after the answer (a 503 while the
        // kid's own fetch runs, then 401), and a new token of the key too.
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: compromised).status != 200)
        let settled = try fixture.jwt.callSettled("GET", "/v1/auth/me", token: compromised)
        #expect(settled.object["code"] as? String == "token_unknown_key", "\(settled.text)")
        #expect(try fixture.jwt.callSettled("GET", "/v1/auth/me", token: idp.sign(claims: idp.claims(subject: "carol"), with: rsa1)).status == 401)
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: kept).status == 200, "the other keys' tokens stay")
        // Audited before it acted, and with what it came to.
        let audit = try fixture.audit()
        #expect(audit.contains("dana refetch_keys 0") && audit.contains("dana refetch_keys_done 200"), "\(audit)")
    }

    @Test func onlyAnAdminRefetchesAfterConfirming() throws {
        let fixture = try Fixture()
        defer { fixture.jwt.stop() }
        let idp = fixture.jwt.idp
        let before = idp.fetches
        let viewer = try fixture.refetch(token: fixture.viewer)
        #expect(viewer.status == 403 && viewer.object["code"] as? String == "forbidden", "\(viewer.text)")
        for body: Any in [[String: Any](), ["confirm": false]] {
            let refused = try fixture.refetch(json: body)
            #expect(refused.status == 422 && refused.object["code"] as? String == "confirmation_required", "\(body): \(refused.text)")
        }
        #expect(try fixture.refetch(json: ["confirm": true, "issuer": idp.issuer]).status == 400)
        // An app user's token, a JWT, or none: 401.
        let user = try fixture.jwt.server.user("jo")
        for token in [user.token, idp.token(subject: "jo")] {
            #expect(try fixture.refetch(token: token).status == 401)
        }
        #expect(try fixture.jwt.server.client().request("POST", "/console/api/jwks/refetch", json: ["confirm": true]).status == 401)
        #expect(idp.fetches == before, "no refused call fetched")
        // The viewer's attempt is audited with its 403.
        #expect(try fixture.audit().contains("vic refetch_keys 403"))
    }

    /// A fetch already running may have started before the withdrawal: the
    /// console's refetch waits for it and fetches again. A provider that
    /// hangs answers `running` after one fetch timeout, not never.
    @Test func aRefetchFollowsAFetchAlreadyRunningAndIsBoundedByTheTimeout() throws {
        let fixture = try Fixture { config in
            config.auth.jwksFetchTimeoutSeconds = 2
            config.auth.jwksMinRefetchSeconds = 3_600
        }
        defer { fixture.jwt.stop() }
        let idp = fixture.jwt.idp
        let compromised = idp.token(subject: "alice", kid: "rsa-1")
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: compromised).status == 200)
        // A fetch starts (a made-up kid) and hangs at the provider, with rsa-1 still listed.
        idp.setHanging(true)
        let ghost = try idp.unpublishedKey(kid: "ghost")
        // Its request waits for that fetch, parked (`UnknownKeyWait`), as long as the fetch
        // timeout: then 503 `jwks_unavailable` if the wait's bound came first, or 401
        // `token_unknown_key` if the fetch's failure did (the keys held lack `ghost`).
        let ghostly = try fixture.jwt.call("GET", "/v1/auth/me", token: idp.sign(claims: idp.claims(subject: "x"), with: ghost))
        #expect([401, 503].contains(ghostly.status), "\(ghostly.status) \(ghostly.text)")
        #expect(eventually(within: 60) { idp.hangingFetches == 1 })
        let fetches = idp.fetches
        // Still hanging: the console says its fetch runs on (or failed, had the first
        // fetch timed out before it asked), and the key is not withdrawn.
        let running = try fixture.refetch()
        let status = (running.object["providers"] as? [[String: Any]])?.first?["status"] as? String
        #expect(["running", "failed"].contains(status), "\(running.text)")
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: compromised).status == 200)
        // The provider recovers without rsa-1; the hanging fetch times out, and the one
        // the console asked for follows it.
        idp.withdraw(kid: "rsa-1")
        idp.setHanging(false)
        let answer = try fixture.refetch()
        let provider = (answer.object["providers"] as? [[String: Any]])?.first
        #expect(provider?["status"] as? String == "fetched", "\(answer.text)")
        #expect(idp.fetches > fetches)
        #expect(try fixture.jwt.call("GET", "/v1/auth/me", token: compromised).object["code"] as? String == "token_unknown_key")
    }
}
