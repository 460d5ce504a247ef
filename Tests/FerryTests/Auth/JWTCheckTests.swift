@testable import Ferry
import Foundation
import Testing

/// The pure parts of JWT sign-in, without keys, servers or clocks: the
/// claim checks with their leeway, the token's shape, and the provider
/// configuration's refusals.
@Suite struct JWTCheckTests {
    let check = JWTClaimsCheck(audiences: ["ferry", "web"], userClaim: "sub", leewaySeconds: 60)
    let now = 1_800_000_000.0

    func claims(_ extra: [String: JSONConfigValue] = [:]) -> [String: JSONConfigValue] {
        ["iss": .string("https://idp"), "aud": .string("ferry"), "sub": .string("alice"), "exp": .integer(1_800_000_600)]
            .merging(extra) { $1 }
    }

    @Test func theLeewayHoldsOnBothSidesOfEachTime() throws {
        #expect(try check.check(claims(["exp": .integer(1_799_999_941)]), now: now).subject == "alice")
        #expect(throws: JWTRefusal.expired) { try check.check(claims(["exp": .integer(1_799_999_940)]), now: now) }
        #expect(try check.check(claims(["nbf": .number(1_800_000_059.5)]), now: now).subject == "alice")
        #expect(throws: JWTRefusal.notYetValid) { try check.check(claims(["nbf": .integer(1_800_000_061)]), now: now) }
        #expect(throws: JWTRefusal.notYetValid) { try check.check(claims(["iat": .integer(1_800_000_061)]), now: now) }
        let passed = try check.check(claims(), now: now)
        #expect(passed.acceptedUntilMs == 1_800_000_660_000, "exp plus the leeway")
    }

    @Test func audienceAndUserClaim() throws {
        #expect(try check.check(claims(["aud": .array([.string("other"), .string("web")])]), now: now).subject == "alice")
        #expect(throws: JWTRefusal.wrongAudience) { try check.check(claims(["aud": .array([.string("other")])]), now: now) }
        #expect(throws: JWTRefusal.wrongAudience) { try check.check(claims(["aud": .array([])]), now: now) }
        let byEmail = JWTClaimsCheck(audiences: ["ferry"], userClaim: "email", leewaySeconds: 0)
        #expect(try byEmail.check(claims(["email": .string("a@b.c")]), now: now).subject == "a@b.c")
        #expect(throws: JWTRefusal.self) { try byEmail.check(claims(), now: now) }
        #expect(throws: JWTRefusal.self) { try check.check(claims(["sub": .string("")]), now: now) }
        #expect(throws: JWTRefusal.self) { try check.check(claims(["exp": .bool(true)]), now: now) }
    }

    @Test func theTokensShapeIsRead() throws {
        let header = TestBase64URL.encode(#"{"alg":"RS256","kid":"k1"}"#)
        let payload = TestBase64URL.encode(#"{"sub":"a","n":[1,{"b":true}]}"#)
        let jwt = try CompactJWT("\(header).\(payload).c2ln")
        #expect(jwt.algorithm == "RS256" && jwt.keyID == "k1")
        #expect(jwt.signingInput == Array("\(header).\(payload)".utf8))
        #expect(jwt.signature == Array("sig".utf8))
        #expect(jwt.claims["n"] == .array([.integer(1), .object(["b": .bool(true)])]))
        #expect(throws: JWTRefusal.self) { try CompactJWT("\(header).\(payload)") }
        #expect(throws: JWTRefusal.self) { try CompactJWT("\(header).\(payload).c2ln.x") }
        #expect(throws: JWTRefusal.self) { try CompactJWT("\(TestBase64URL.encode(#"{"alg":"RS256","crit":["x"]}"#)).\(payload).c2ln") }
        #expect(throws: JWTRefusal.self) { try CompactJWT("\(TestBase64URL.encode(#"{"kid":"k"}"#)).\(payload).c2ln") }
        #expect(throws: JWTRefusal.tooLarge) { try CompactJWT(String(repeating: "a", count: 9000)) }
    }

    @Test func providerEntriesAreRefusedNamingTheMember() {
        func reason(_ json: String) -> String? {
            if case .failure(let error) = JWTProvider.parseList(json) { return error.reason }
            return nil
        }
        #expect(reason(#"[{"audience": "a", "jwks_url": "https://x/j"}]"#)?.hasPrefix("[0].issuer") == true)
        #expect(reason(#"[{"issuer": "i", "jwks_url": "https://x/j"}]"#)?.hasPrefix("[0].audience") == true)
        #expect(reason(#"[{"issuer": "i", "audience": "a"}]"#)?.contains("needs keys") == true)
        #expect(reason(#"[{"issuer": "i", "audience": "a", "secret": "short"}]"#)?.hasPrefix("[0].secret") == true)
        #expect(reason(#"[{"issuer": "i", "audience": "a", "jwks_url": "ftp://x"}]"#)?.hasPrefix("[0].jwks_url") == true)
        #expect(
            reason(#"[{"issuer": "i", "audience": "a", "jwks_url": "https://x/j", "algorithms": ["HS512"]}]"#)?
                .hasPrefix("[0].algorithms") == true)
        #expect(reason(#"[{"issuer": "i", "audience": "a", "jwks_url": "https://x/j", "typo": 1}]"#)?.hasPrefix("[0].typo") == true)
        let twice = #"{"issuer": "i", "audience": "a", "jwks_url": "https://x/j"}"#
        #expect(reason("[\(twice), \(twice)]")?.hasPrefix("[1].issuer") == true)
        #expect(reason(#"[{"issuer": "i", "audience": ["a", "b"], "jwks_url": "https://x/j", "user_claim": "email"}]"#) == nil)
    }

    @Test func theConfigurationTakesProvidersFromTheEnvironmentAndRefusesJWTsOnlyWithoutOne() throws {
        let providers = #"[{"issuer": "https://idp", "audience": "ferry", "secret": "0123456789abcdef0123456789abcdef"}]"#
        let config = try ConfigurationLoader.load(path: nil, environment: ["FERRY_AUTH_JWT_PROVIDERS": providers])
        #expect(config.auth.jwtProviders.map(\.issuer) == ["https://idp"])
        #expect(!String(describing: config.auth.jwtProviders[0]).contains("0123456789abcdef"), "the secret is never printed")
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(path: nil, environment: ["FERRY_AUTH_BUILTIN_TOKENS": "false"])
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(path: nil, environment: ["FERRY_AUTH_JWT_PROVIDERS": "[{}]"])
        }
    }
}

/// Base64url for hand-made test tokens.
enum TestBase64URL {
    static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
