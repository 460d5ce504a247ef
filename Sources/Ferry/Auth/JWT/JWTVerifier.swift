import FerryHTTP
import Logging

/// A JWT that verified: who it names and what it claims.
package struct VerifiedJWT: Sendable, Equatable {
    /// The provider's `iss`.
    package let issuer: String
    /// The user claim's value (`sub` by default).
    package let subject: String
    /// Every claim, as the JSON text `ferry.claims()` returns.
    package let claims: String
    /// Until when the token is accepted (`exp` plus the leeway), in ms since the Unix epoch.
    package let acceptedUntilMs: Int64
}

/// Verifies the JWTs of the configured providers (`auth.jwt_providers`).
///
/// In order: the token's shape (``CompactJWT``); `alg`, which must be one
/// Ferry verifies and never `none`; `iss`, which picks the provider; the key
/// with the token's `kid`, fetched again if it is not held; the algorithm
/// pinned to that key, which `alg` must equal; the signature (jwt-kit); and
/// the claims (``JWTClaimsCheck``). A refusal throws ``JWTRefusal``; keys that
/// cannot be had throw a 503 ``Problem``.
public final class JWTVerifier: Sendable {
    private let providers: [String: (keys: ProviderKeys, check: JWTClaimsCheck)]

    /// Reads every provider's keys; throws for fixed keys that cannot be read.
    public init(providers: [JWTProvider], timing: KeyTiming, leewaySeconds: Int, logger: Logger) throws {
        var table: [String: (keys: ProviderKeys, check: JWTClaimsCheck)] = [:]
        for provider in providers {
            let keys = try ProviderKeys(provider: provider, timing: timing, logger: logger)
            let check = JWTClaimsCheck(audiences: provider.audiences, userClaim: provider.userClaim, leewaySeconds: Double(leewaySeconds))
            table[provider.issuer] = (keys, check)
        }
        self.providers = table
    }

    /// Verifies `token` at `now` (seconds since the Unix epoch).
    package func verify(_ token: String, now: Double) throws -> VerifiedJWT {
        let jwt = try CompactJWT(token)
        guard jwt.algorithm.lowercased() != "none" else { throw JWTRefusal.algorithm("none is never accepted") }
        guard JWTProvider.supportedAlgorithms.contains(jwt.algorithm) else {
            throw JWTRefusal.algorithm("Ferry verifies \(JWTProvider.supportedAlgorithms.joined(separator: ", ")) only")
        }
        let issuer: String
        switch jwt.claims["iss"] {
        case .string(let value)?: issuer = value
        case nil: throw JWTRefusal.unknownIssuer
        default: throw JWTRefusal.invalidClaim("iss must be a string")
        }
        guard let (keys, check) = providers[issuer] else { throw JWTRefusal.unknownIssuer }
        guard keys.provider.algorithms.contains(jwt.algorithm) else {
            throw JWTRefusal.algorithm("the issuer's keys use \(keys.provider.algorithms.joined(separator: ", "))")
        }
        let candidates: [VerifyingKey]
        switch keys.lookup(kid: jwt.keyID) {
        case .keys(let found): candidates = found
        case .unknown: throw JWTRefusal.unknownKey
        case .unavailable(let seconds): throw Problem.keysUnavailable(issuer: issuer, retryAfter: seconds)
        }
        // The key's pinned algorithm decides; alg only has to agree with it.
        let pinned = candidates.filter { $0.algorithm == jwt.algorithm }
        guard !pinned.isEmpty else {
            throw JWTRefusal.algorithm("the key is pinned to \(Set(candidates.map(\.algorithm)).sorted().joined(separator: ", "))")
        }
        guard pinned.contains(where: { $0.verifies(jwt.signature, signs: jwt.signingInput) }) else {
            throw JWTRefusal.badSignature
        }
        let passed = try check.check(jwt.claims, now: now)
        let claims = String(decoding: JSONConfigValue.object(jwt.claims).jsonValue.bytes, as: UTF8.self)
        return VerifiedJWT(issuer: issuer, subject: passed.subject, claims: claims, acceptedUntilMs: passed.acceptedUntilMs)
    }

    /// How many times `issuer`'s key set was fetched (for tests).
    func fetches(issuer: String) -> Int { providers[issuer]?.keys.fetches ?? 0 }

    /// Ends the background key refreshes.
    public func stop() {
        for (keys, _) in providers.values { keys.stop() }
    }
}
