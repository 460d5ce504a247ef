@testable import Ferry
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation

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

    /// The id `GET /v1/auth/me` gives the holder of `token`.
    func userID(_ token: String) throws -> String? {
        try call("GET", "/v1/auth/me", token: token).object["id"] as? String
    }

    func stop() {
        server.stop()
        for idp in providers { idp.stop() }
    }
}
