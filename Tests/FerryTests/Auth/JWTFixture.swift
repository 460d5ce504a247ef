@testable import Ferry
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// A Ferry server accepting the JWTs of test identity providers, with
/// helpers to call it as the holder of a token.
struct JWTFixture {
    let server: TestServer
    let providers: [TestIdentityProvider]

    /// A server trusting `providers` (one new provider by default) through their JWKS URLs.
    init(providers: [TestIdentityProvider]? = nil, _ configure: (inout FerryConfiguration) -> Void = { _ in }) throws {
        let providers = try providers ?? [TestIdentityProvider()]
        self.providers = providers
        server = try TestServer { config in
            config.auth.jwtProviders = providers.map(Self.provider)
            configure(&config)
        }
    }

    /// The provider entry for `idp`'s JWKS URL.
    static func provider(_ idp: TestIdentityProvider) -> JWTProvider {
        var provider = JWTProvider(issuer: idp.issuer, audiences: [idp.audience])
        provider.jwksURL = URL(string: idp.jwksURL)
        return provider
    }

    var idp: TestIdentityProvider { providers[0] }

    /// `method path` with `token` as the bearer.
    func call(_ method: String, _ path: String, token: String, json: Any? = nil) throws -> TestHTTPClient.Response {
        try server.client().request(method, path, headers: [("Authorization", "Bearer \(token)")], json: json)
    }

    /// The server's verifier.
    var verifier: JWTVerifier { server.app.database.jwt! }

    /// ``call(_:_:token:json:)``, again after each 503 `jwks_unavailable` that
    /// says a fetch runs (`Retry-After: 1`), once no fetch of `idp`'s runs:
    /// what a client that honours `Retry-After` sees, without its sleep.
    func callSettled(_ method: String, _ path: String, token: String, idp: TestIdentityProvider? = nil) throws -> TestHTTPClient.Response {
        let issuer = (idp ?? self.idp).issuer
        var answer = try call(method, path, token: token)
        for _ in 0..<20 where answer.status == 503 && answer.header("Retry-After") == "1" {
            waitForFetches(issuer: issuer)
            answer = try call(method, path, token: token)
        }
        return answer
    }

    /// Returns once every fetch of `issuer`'s keys started so far has finished
    /// (gives up after a minute, leaving the assertion that follows to fail).
    func waitForFetches(issuer: String) {
        let verifier = self.verifier
        let deadline = Date().addingTimeInterval(60)
        while verifier.finishedFetches(issuer: issuer) < verifier.fetches(issuer: issuer), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// The id `GET /v1/auth/me` gives the holder of `token`.
    func userID(_ token: String) throws -> String? {
        try call("GET", "/v1/auth/me", token: token).object["id"] as? String
    }

    func stop() {
        server.stop()
        for idp in providers { idp.stop() }
    }
}

extension JWTFixture {
    /// A server of `workers` workers whose provider's fetch, once it starts, hangs
    /// longer than any test (600 s, set in code; a file allows 120), with a Ferry
    /// token and a JWT already verified and cached: the issue-51 burst tests' setup.
    static func forHangingFetch(workers: Int) throws -> (fixture: JWTFixture, ferryToken: String, cachedJWT: String) {
        let fixture = try JWTFixture { config in
            config.listen.workerThreads = workers
            config.auth.jwksFetchTimeoutSeconds = 600
            config.auth.jwksMinRefetchSeconds = 600
        }
        let ferryToken = try fixture.server.user("local").token
        let cachedJWT = fixture.idp.token(subject: "cached")
        #expect(try fixture.call("GET", "/v1/auth/me", token: cachedJWT).status == 200)
        return (fixture, ferryToken, cachedJWT)
    }
}
