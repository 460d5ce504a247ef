import FerryBase
import FerryHTTP
import Foundation
import Logging

/// A JWT that verified: who it names and what it claims.
package struct VerifiedJWT: Sendable, Equatable {
    /// The provider's `iss`.
    package let issuer: String
    /// The user claim's value (`sub` by default).
    package let subject: String
    /// Every claim, as the JSON text `ferry.claims()` returns.
    package let claims: String
    /// The user's lookup name, when the provider keeps one (``JWTProvider/lookupName(in:)``).
    package var lookupName: String?
    /// Until when the token is accepted (`exp` plus the leeway), in ms since the Unix epoch.
    package let acceptedUntilMs: Int64
    /// The key that verified it (``ProviderKeys/identity(of:)``): its cache
    /// entry ends when a fetch withdraws that key.
    package var keyIdentity = ""
    /// Until when the key set that verified it is trusted (its fetch, plus
    /// the refresh interval and the grace); nil for fixed keys.
    package var keysTrustedUntil: ContinuousClock.Instant?
}

/// Verifies the JWTs of the configured providers (`auth.jwt_providers`).
///
/// In order: the token's shape (``CompactJWT``); `alg`, which must be one
/// Ferry verifies and never `none`; `iss`, which picks the provider; the key
/// with the token's `kid` (when it is not held, a fetch starts in the
/// background and the request, parked by ``UnknownKeyWait`` until that
/// fetch ends, gets 503 if the key is still not held, ``ProviderKeys``); the
/// algorithm pinned to that key, which `alg` must equal; the signature
/// (jwt-kit); that it is an access token (``JWTTypeCheck``); and the claims
/// (``JWTClaimsCheck``). A refusal throws ``JWTRefusal``; keys that
/// cannot be had throw a 503 ``Problem``.
public final class JWTVerifier: Sendable {
    private let providers: [String: (keys: ProviderKeys, check: JWTClaimsCheck, type: JWTTypeCheck)]
    /// Who hears of withdrawn keys (the verified-token cache); set once the gateway exists.
    private let withdrawalListeners = Locked<[@Sendable ([String]) -> Void]>([])

    /// Reads every provider's keys; throws for fixed keys that cannot be read.
    /// The JWKS URLs are fetched all at once, and start-up waits for them at
    /// most one fetch timeout (plus a second): a hanging provider delays it by
    /// that, however many there are, and its fetch finishes in the background.
    public init(providers: [JWTProvider], timing: KeyTiming, leewaySeconds: Int, logger: Logger) throws {
        var table: [String: (keys: ProviderKeys, check: JWTClaimsCheck, type: JWTTypeCheck)] = [:]
        let listeners = withdrawalListeners
        let notify: @Sendable ([String]) -> Void = { withdrawn in
            for listener in listeners.withLock({ $0 }) { listener(withdrawn) }
        }
        for provider in providers {
            let keys = try ProviderKeys(provider: provider, timing: timing, logger: logger, onWithdrawn: notify)
            let check = JWTClaimsCheck(audiences: provider.audiences, userClaim: provider.userClaim, leewaySeconds: Double(leewaySeconds))
            table[provider.issuer] = (keys, check, JWTTypeCheck(tokenTypes: provider.tokenTypes, idTokens: provider.idTokens))
        }
        self.providers = table
        let fetching = table.values.map(\.keys).filter { $0.provider.jwksURL != nil }
        let group = DispatchGroup()
        for keys in fetching {
            group.enter()
            let thread = Thread {
                keys.fetchNow()
                group.leave()
            }
            thread.name = "ferry-jwks-start"
            thread.start()
        }
        let seconds = Double(timing.fetchTimeout.components.seconds) + Double(timing.fetchTimeout.components.attoseconds) / 1e18
        if group.wait(timeout: .now() + seconds + 1) == .timedOut {
            logger.warning("JWKS fetches still running at start; serving, their providers' tokens get 503 until they finish")
        }
        for keys in fetching { keys.startRefreshing() }
    }

    /// Calls `listener` with the identities of the keys each fetch withdraws.
    package func onWithdrawn(_ listener: @escaping @Sendable ([String]) -> Void) {
        withdrawalListeners.withLock { $0.append(listener) }
    }

    /// Fetches every provider's JWKS again now, each on a thread of its own
    /// (SIGHUP: an operator withdrew a key and will not wait for the next
    /// refresh). A fetch already running is followed by a new one
    /// (``ProviderKeys/refetch(wait:)``). With `wait`, returns once they finished or one fetch timeout passed.
    public func refetchKeys(wait: Bool = false) {
        if wait {
            _ = refetchAll()
        } else {
            let thread = Thread { [self] in _ = refetchAll() }
            thread.name = "ferry-jwks-sighup"
            thread.start()
        }
    }

    /// Refetches every provider's JWKS at once (``ProviderKeys/refetch(wait:)``)
    /// and returns, by issuer, what each came to, once every fetch has
    /// finished or one fetch timeout (plus a second) has passed: the console's
    /// "refetch keys" and SIGHUP. Providers without a JWKS URL are left out.
    func refetchAll() -> [(issuer: String, outcome: ProviderKeys.Refetch)] {
        let fetching = providers.values.map(\.keys).filter { $0.provider.jwksURL != nil }.sorted { $0.provider.issuer < $1.provider.issuer }
        let outcomes = Locked([String: ProviderKeys.Refetch]())
        let group = DispatchGroup()
        for keys in fetching {
            group.enter()
            let thread = Thread {
                let outcome = keys.refetch(wait: keys.timing.fetchTimeout + .seconds(1))
                outcomes.withLock { $0[keys.provider.issuer] = outcome }
                group.leave()
            }
            thread.name = "ferry-jwks-refetch-wait"
            thread.start()
        }
        group.wait()
        let found = outcomes.withLock { $0 }
        return fetching.map { ($0.provider.issuer, found[$0.provider.issuer] ?? .running) }
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
        guard let (keys, check, type) = providers[issuer] else { throw JWTRefusal.unknownIssuer }
        guard keys.provider.algorithms.contains(jwt.algorithm) else {
            throw JWTRefusal.algorithm("the issuer's keys use \(keys.provider.algorithms.joined(separator: ", "))")
        }
        let candidates: [VerifyingKey]
        let trustedUntil: ContinuousClock.Instant?
        switch keys.lookup(kid: jwt.keyID) {
        case .keys(let found, let until): (candidates, trustedUntil) = (found, until)
        case .unknown: throw JWTRefusal.unknownKey
        case .fetching: throw Problem.keysFetching(issuer: issuer)
        case .unavailable(let seconds): throw Problem.keysUnavailable(issuer: issuer, retryAfter: seconds)
        }
        // The key's pinned algorithm decides; alg only has to agree with it.
        let pinned = candidates.filter { $0.algorithm == jwt.algorithm }
        guard !pinned.isEmpty else {
            throw JWTRefusal.algorithm("the key is pinned to \(Set(candidates.map(\.algorithm)).sorted().joined(separator: ", "))")
        }
        guard let key = pinned.first(where: { $0.verifies(jwt.signature, signs: jwt.signingInput) }) else {
            throw JWTRefusal.badSignature
        }
        try type.check(type: jwt.type, claims: jwt.claims)
        let passed = try check.check(jwt.claims, now: now)
        let claims = String(decoding: JSONConfigValue.object(jwt.claims).jsonValue.bytes, as: UTF8.self)
        var verified = VerifiedJWT(issuer: issuer, subject: passed.subject, claims: claims, acceptedUntilMs: passed.acceptedUntilMs)
        verified.keyIdentity = keys.identity(of: key.identity)
        verified.keysTrustedUntil = trustedUntil
        verified.lookupName = keys.provider.lookupName(in: jwt.claims)
        return verified
    }

    /// Issue 51: whether the request carrying `token` should wait, parked, for
    /// a fetch of its provider's keys (``ProviderKeys/waitForFetch(kid:ticket:now:)``):
    /// its `kid` is not held and a fetch runs, or this call started one. Then
    /// `ticket` (armed by the caller) is woken when that fetch ends, and the
    /// provider's keys are returned (to forget the ticket on resumption). Nil
    /// for every other token, at no cost beyond reading its header and claims:
    /// ``verify(_:now:)`` answers those as before. Never waits itself.
    func waitForKey(_ token: String, ticket: ParkingTicket) -> ProviderKeys? {
        guard let jwt = try? CompactJWT(token), JWTProvider.supportedAlgorithms.contains(jwt.algorithm),
            case .string(let issuer)? = jwt.claims["iss"], let keys = providers[issuer]?.keys,
            keys.provider.algorithms.contains(jwt.algorithm)
        else { return nil }
        return keys.waitForFetch(kid: jwt.keyID, ticket: ticket) ? keys : nil
    }

    /// How long a request waits for a fetch of `keys` at most, in seconds: the
    /// fetch timeout (a fetch that takes longer has failed; waiting less would
    /// refuse a request whose key is on its way), but never more than
    /// ``longestKeyWait``.
    static func keyWait(_ keys: ProviderKeys) -> Double {
        let timeout = keys.timing.fetchTimeout.components
        return min(longestKeyWait, Double(timeout.seconds) + Double(timeout.attoseconds) / 1e18)
    }

    /// 10 s: past it, an operator's long `auth.jwks_fetch_timeout_seconds` (up
    /// to 120) would hold a request past the patience of most clients and of
    /// proxies' read timeouts; the default fetch timeout, 5 s, is within it.
    static let longestKeyWait: Double = 10

    /// How many requests wait for a fetch of `issuer`'s keys (for tests).
    func waiting(issuer: String) -> Int { providers[issuer]?.keys.waiting ?? 0 }

    /// How many times `issuer`'s key set was fetched (for tests).
    func fetches(issuer: String) -> Int { providers[issuer]?.keys.fetches ?? 0 }

    /// How many of `issuer`'s fetches have finished (for tests).
    func finishedFetches(issuer: String) -> Int { providers[issuer]?.keys.finishedFetches ?? 0 }

    /// Ends the background key refreshes.
    public func stop() {
        for (keys, _, _) in providers.values { keys.stop() }
    }
}
