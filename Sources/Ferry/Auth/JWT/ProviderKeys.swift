import FerryBase
import Foundation
import Logging

/// How long a provider's fetched keys live and how often they are fetched
/// (`auth.jwks_*`).
public struct KeyTiming: Sendable, Equatable {
    /// The key set is fetched again this often, in the background.
    public var refresh: Duration
    /// Past a refresh that failed, the keys held keep serving this much longer;
    /// then tokens that need them get 503 `jwks_unavailable`.
    public var grace: Duration
    /// An unknown `kid` fetches the key set again at most once per this interval.
    public var minRefetch: Duration
    /// How long one fetch may take.
    public var fetchTimeout: Duration

    public init(refresh: Duration, grace: Duration, minRefetch: Duration, fetchTimeout: Duration = .seconds(5)) {
        self.refresh = refresh
        self.grace = grace
        self.minRefetch = minRefetch
        self.fetchTimeout = fetchTimeout
    }
}

/// One provider's keys: the fixed ones (a JWKS file or inline, an HS256
/// secret) and the ones fetched from its JWKS URL, at start, every
/// ``KeyTiming/refresh`` in the background, and when a token names a `kid`
/// not held. Concurrent requests for an unknown `kid` share one fetch, and
/// fetches on demand happen at most once per ``KeyTiming/minRefetch``: a
/// rotation costs one fetch, and a flood of made-up `kid`s costs no more.
final class ProviderKeys: Sendable {
    let provider: JWTProvider
    let timing: KeyTiming
    private let logger: Logger
    private let state: Locked<State>

    private struct State {
        var fixed: [VerifyingKey]
        var fetched: [VerifyingKey] = []
        /// When the key set was last fetched successfully.
        var fetchedAt: ContinuousClock.Instant?
        /// When a fetch for an unknown `kid` last started (the rate limit's clock).
        var lastOnDemand: ContinuousClock.Instant?
        /// Whether the last fetch succeeded.
        var lastSucceeded = false
        var fetching = false
        var stopped = false
        /// Fetches made, successful or not (for tests and the log).
        var fetches = 0
    }

    /// What a lookup found.
    enum Lookup {
        /// The keys with the `kid` (every key, for a token without one).
        case keys([VerifyingKey])
        /// No such key, and the key set is current.
        case unknown
        /// The key set cannot be fetched and what is held is past its grace.
        case unavailable(retryAfterSeconds: Int)
    }

    /// Reads the fixed keys (throwing for an unreadable file or set), then
    /// fetches the URL's once; a failed fetch is logged, not thrown, so that
    /// Ferry serves while the provider is down (its tokens get 503 until a fetch succeeds).
    init(provider: JWTProvider, timing: KeyTiming, logger: Logger) throws(KeyImportError) {
        self.provider = provider
        self.timing = timing
        self.logger = logger
        var fixed: [VerifyingKey] = []
        var sources: [(String, String)] = []
        if let file = provider.jwksFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw KeyImportError("\(provider.issuer): cannot read jwks_file \(file)")
            }
            sources.append(("jwks_file \(file)", String(decoding: data, as: UTF8.self)))
        }
        if let inline = provider.jwks { sources.append(("jwks", inline)) }
        for (source, text) in sources {
            do {
                let read = try KeyImport.keys(jwks: text, algorithms: provider.algorithms, symmetricAllowed: true)
                for reason in read.skipped { logger.warning("JWT key skipped", metadata: ["issuer": "\(provider.issuer)", "source": "\(source)", "reason": "\(reason)"]) }
                fixed += read.keys
            } catch let error as KeyImportError {
                throw KeyImportError("\(provider.issuer): \(source): \(error.reason)")
            } catch {
                throw KeyImportError("\(provider.issuer): \(source): \(error)")
            }
        }
        if let secret = provider.secret {
            do { fixed.append(try KeyImport.secret(secret)) } catch {
                throw KeyImportError("\(provider.issuer): secret: \(error)")
            }
        }
        state = Locked(State(fixed: fixed))
        if provider.jwksURL != nil {
            _ = fetch(force: true)
            let thread = Thread { [self] in refreshLoop() }
            thread.name = "ferry-jwks"
            thread.start()
        }
    }

    /// The keys with `kid` (all keys when nil), fetching the key set again when
    /// none has it and the rate limit allows.
    func lookup(kid: String?, now: ContinuousClock.Instant = .now) -> Lookup {
        let (found, current) = held(kid: kid, now: now)
        if !found.isEmpty { return .keys(found) }
        guard provider.jwksURL != nil else { return .unknown }
        switch fetch(force: false) {
        case .fetched:
            let (again, _) = held(kid: kid, now: .now)
            return again.isEmpty ? .unknown : .keys(again)
        case .failed:
            return .unavailable(retryAfterSeconds: retryAfter)
        case .rateLimited:
            return current ? .unknown : .unavailable(retryAfterSeconds: retryAfter)
        }
    }

    /// The held keys with `kid`, and whether the fetched set is within its grace.
    private func held(kid: String?, now: ContinuousClock.Instant) -> ([VerifyingKey], Bool) {
        state.withLock { state in
            let current = state.fetchedAt.map { now < $0 + timing.refresh + timing.grace } ?? false
            let keys = current ? state.fixed + state.fetched : state.fixed
            return (kid == nil ? keys : keys.filter { $0.keyID == kid }, current || provider.jwksURL == nil)
        }
    }

    private var retryAfter: Int { max(1, Int(timing.minRefetch.components.seconds)) }

    private enum FetchOutcome { case fetched, failed, rateLimited }

    /// Fetches the key set unless one fetch is under way (then waits for it) or,
    /// unless `force`, one started within ``KeyTiming/minRefetch``.
    private func fetch(force: Bool) -> FetchOutcome {
        enum Turn { case mine, waited(Bool), limited }
        let deadline = LockDeadline(after: timing.fetchTimeout + .seconds(2))
        var sawFetch = false
        let turn: Turn = state.withLockWaiting(until: deadline) { state, wake in
            if state.fetching {
                sawFetch = true
                return wake == .timedOut ? .waited(false) : nil
            }
            if sawFetch { return .waited(state.lastSucceeded) }
            if !force, let last = state.lastOnDemand, ContinuousClock.now < last + timing.minRefetch { return .limited }
            state.fetching = true
            if !force { state.lastOnDemand = .now }
            state.fetches += 1
            return .mine
        }
        switch turn {
        case .limited: return .rateLimited
        case .waited(let succeeded): return succeeded ? .fetched : .failed
        case .mine: break
        }
        let result = Self.download(provider, timeout: timing.fetchTimeout)
        state.withLock { state in
            state.fetching = false
            switch result {
            case .success(let keys):
                state.fetched = keys
                state.fetchedAt = .now
                state.lastSucceeded = true
            case .failure:
                state.lastSucceeded = false
            }
        }
        state.broadcast()
        switch result {
        case .success(let keys):
            logger.info("JWKS fetched", metadata: ["issuer": "\(provider.issuer)", "keys": "\(keys.count)"])
            return .fetched
        case .failure(let error):
            logger.warning("JWKS fetch failed; keeping the keys held", metadata: ["issuer": "\(provider.issuer)", "reason": "\(error.reason)"])
            return .failed
        }
    }

    /// The URL's key set, read.
    private static func download(_ provider: JWTProvider, timeout: Duration) -> Result<[VerifyingKey], KeyImportError> {
        guard let url = provider.jwksURL else { return .success([]) }
        switch JWKSFetch.text(url, timeout: timeout) {
        case .failure(let error): return .failure(error)
        case .success(let text):
            do {
                return .success(try KeyImport.keys(jwks: text, algorithms: provider.algorithms, symmetricAllowed: false).keys)
            } catch let error as KeyImportError {
                return .failure(KeyImportError("\(url.absoluteString): \(error.reason)"))
            } catch {
                return .failure(KeyImportError("\(url.absoluteString): \(error)"))
            }
        }
    }

    /// Fetches every ``KeyTiming/refresh`` until ``stop()``.
    private func refreshLoop() {
        while true {
            let deadline = LockDeadline(after: timing.refresh)
            let stop: Bool = state.withLockWaiting(until: deadline) { state, wake in
                if state.stopped { return true }
                return wake == .timedOut ? false : nil
            }
            if stop { return }
            _ = fetch(force: true)
        }
    }

    /// Ends the background refresh.
    func stop() {
        state.withLock { $0.stopped = true }
        state.broadcast()
    }

    /// How many fetches were made.
    var fetches: Int { state.withLock { $0.fetches } }
}
