import FerryBase
import FerryHTTP
import Foundation
import Logging

/// One provider's keys: the fixed ones (a JWKS file or inline, an HS256
/// secret) and the ones fetched from its JWKS URL, at start, every
/// ``KeyTiming/refresh`` in the background, on an operator's demand
/// (SIGHUP), and when a token names a `kid` not held.
///
/// No worker ever waits for a fetch (issue 51): a fetch runs on a thread of
/// its own, one at a time per provider. A request whose token names a `kid`
/// not held while a fetch runs, or that starts one, is parked on the event
/// loop (``UnknownKeyWait``, ``waitForFetch(kid:ticket:)``) and woken when
/// that fetch ends; one that cannot be parked is answered at once with 503
/// `jwks_unavailable` and `Retry-After: 1`. A fetch on demand starts at most
/// once per ``KeyTiming/minRefetch``: a rotation costs one fetch, and a flood
/// of made-up `kid`s costs no more, and holds no worker while the provider hangs.
///
/// A fetch that no longer lists a key withdraws it: the key stops verifying
/// at once, and ``onWithdrawn`` tells the verified-token cache to drop what
/// it verified.
final class ProviderKeys: Sendable {
    let provider: JWTProvider
    let timing: KeyTiming
    private let logger: Logger
    private let state: Locked<State>
    /// Called with the ``VerifyingKey/identity`` of each key a fetch withdrew (issuer-qualified).
    private let onWithdrawn: @Sendable ([String]) -> Void

    private struct State {
        var fixed: [VerifyingKey]
        var fetched: [VerifyingKey] = []
        /// When the key set was last fetched successfully.
        var fetchedAt: ContinuousClock.Instant?
        /// When a fetch for an unknown `kid` last started (the rate limit's clock).
        var lastOnDemand: ContinuousClock.Instant?
        var fetching = false
        /// A refetch was asked for while a fetch ran (which may have started
        /// before the keys changed): another fetch starts as that one ends.
        var again = false
        /// What the last finished fetch came to.
        var last: FetchOutcome?
        var stopped = false
        /// Fetches made, successful or not (for tests and the log).
        var fetches = 0
        /// Fetches finished, successful or not (for tests).
        var finished = 0
        /// Requests parked until a fetch ends, by ticket, with the `kid` each waits for.
        var waiters: [ObjectIdentifier: (ticket: ParkingTicket, kid: String?)] = [:]

        /// Whether a key with `kid` (any key, when nil) is held.
        func holds(kid: String?) -> Bool {
            (fixed + fetched).contains { kid == nil || $0.keyID == kid }
        }
    }

    /// What a lookup decided under the lock.
    private enum Next { case found([VerifyingKey], ContinuousClock.Instant?), unknown, fetching, start, unavailable }

    /// What a lookup found.
    enum Lookup {
        /// The keys with the `kid` (every key, for a token without one), and
        /// until when they are trusted (nil: fixed keys, for good).
        case keys([VerifyingKey], trustedUntil: ContinuousClock.Instant?)
        /// No such key, and the key set is current.
        case unknown
        /// A fetch runs (or was just started for this token): ask again shortly.
        case fetching
        /// The key set cannot be fetched and what is held is past its grace.
        case unavailable(retryAfterSeconds: Int)
    }

    /// What one fetch came to.
    struct FetchOutcome: Sendable, Equatable {
        /// Whether the key set was fetched and read (else the keys held are kept).
        var fetched: Bool
        /// The keys the set holds now (fetched ones; 0 after a failure: the held ones serve on).
        var keys: Int
        /// How many keys the fetch withdrew.
        var withdrawn: Int
        /// Why it failed.
        var reason: String?
    }

    /// What ``refetch(wait:)`` came to.
    enum Refetch: Sendable, Equatable {
        /// A fetch that started after the call finished, with this outcome.
        case finished(FetchOutcome)
        /// No such fetch finished within the wait: it runs on (a hanging provider), and its keys replace the held ones when it ends.
        case running
    }

    /// Reads the fixed keys, throwing for an unreadable file or set. The URL's
    /// keys are not fetched here: ``JWTVerifier`` fetches every provider's at
    /// once (``fetchNow()``), and a failed fetch is logged, not thrown, so that
    /// Ferry serves while a provider is down (its tokens get 503 until a fetch succeeds).
    init(
        provider: JWTProvider, timing: KeyTiming, logger: Logger,
        onWithdrawn: @escaping @Sendable ([String]) -> Void = { _ in }
    ) throws(KeyImportError) {
        self.provider = provider
        self.timing = timing
        self.logger = logger
        self.onWithdrawn = onWithdrawn
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
                for reason in read.skipped {
                    logger.warning("JWT key skipped", metadata: ["issuer": "\(provider.issuer)", "source": "\(source)", "reason": "\(reason)"])
                }
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
    }

    /// Starts the background refresh (after the first fetch, by ``JWTVerifier``).
    func startRefreshing() {
        guard provider.jwksURL != nil else { return }
        let thread = Thread { [self] in refreshLoop() }
        thread.name = "ferry-jwks"
        thread.start()
    }

    /// The keys with `kid` (all keys when nil). Never waits: when none has it,
    /// a fetch is started on its own thread (unless one runs, or the rate
    /// limit holds) and the answer is ``Lookup/fetching``.
    func lookup(kid: String?, now: ContinuousClock.Instant = .now) -> Lookup {
        let next = state.withLock { decide(kid: kid, now: now, &$0) }
        switch next {
        case .found(let keys, let until): return .keys(keys, trustedUntil: until)
        case .unknown: return .unknown
        case .fetching: return .fetching
        case .unavailable: return .unavailable(retryAfterSeconds: retryAfter)
        case .start:
            startOnDemand()
            return .fetching
        }
    }

    /// What a lookup of `kid` comes to now; a `.start` has counted its fetch as running.
    private func decide(kid: String?, now: ContinuousClock.Instant, _ state: inout State) -> Next {
        let trustedUntil = state.fetchedAt.map { $0 + timing.refresh + timing.grace }
        let current = trustedUntil.map { now < $0 } ?? false
        let fetched = current ? state.fetched.filter { kid == nil || $0.keyID == kid } : []
        let fixed = state.fixed.filter { kid == nil || $0.keyID == kid }
        if !fetched.isEmpty { return .found(fixed + fetched, trustedUntil) }
        if !fixed.isEmpty { return .found(fixed, nil) }
        guard provider.jwksURL != nil else { return .unknown }
        if state.fetching { return .fetching }
        if state.stopped { return current ? .unknown : .unavailable }
        if let last = state.lastOnDemand, now < last + timing.minRefetch { return current ? .unknown : .unavailable }
        state.lastOnDemand = now
        state.fetching = true
        state.fetches += 1
        return .start
    }

    private func startOnDemand() {
        let thread = Thread { [self] in download() }
        thread.name = "ferry-jwks-kid"
        thread.start()
    }

    /// Whether a request whose token names `kid` should wait for a fetch:
    /// when ``lookup(kid:now:)`` would answer ``Lookup/fetching`` (a fetch
    /// runs, or this call starts it). Then `ticket`, which the caller armed, is
    /// held here and woken when a fetch ends that found the key, or when the
    /// last fetch of a run ends (found or not, failed or timed out), or on
    /// ``stop()``; the caller parks its exchange. Deciding and registering
    /// happen under one lock, which the waking takes too: no wake is lost.
    func waitForFetch(kid: String?, ticket: ParkingTicket, now: ContinuousClock.Instant = .now) -> Bool {
        let next: Next = state.withLock { state in
            let next = decide(kid: kid, now: now, &state)
            switch next {
            case .fetching, .start: state.waiters[ObjectIdentifier(ticket)] = (ticket, kid)
            default: break
            }
            return next
        }
        switch next {
        case .fetching: return true
        case .start:
            startOnDemand()
            return true
        default: return false
        }
    }

    /// Forgets a parked request's ticket (it resumed, or its client went away).
    func forget(_ ticket: ParkingTicket) {
        state.withLock { _ = $0.waiters.removeValue(forKey: ObjectIdentifier(ticket)) }
    }

    /// How many requests wait for a fetch (for tests).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// The waiters a finished fetch wakes, taken out of `state`: those whose
    /// key is now held, and all of them when no fetch follows.
    private static func takeWoken(_ state: inout State, more: Bool) -> [ParkingTicket] {
        let woken = state.waiters.filter { !more || state.holds(kid: $0.value.kid) }
        for key in woken.keys { state.waiters.removeValue(forKey: key) }
        return woken.values.map(\.ticket)
    }

    private var retryAfter: Int { max(1, Int(timing.minRefetch.components.seconds)) }

    /// Fetches the key set on the calling thread, unless a fetch runs already
    /// (then returns at once): at start, from the refresh loop, and on SIGHUP.
    /// Whether this call fetched.
    @discardableResult
    func fetchNow() -> Bool {
        guard provider.jwksURL != nil else { return false }
        let mine: Bool = state.withLock { state in
            guard !state.fetching, !state.stopped else { return false }
            state.fetching = true
            state.fetches += 1
            return true
        }
        if mine { download() }
        return mine
    }

    /// Fetches the key set anew for an operator (the console, SIGHUP): a fetch
    /// that starts after this call, even when one runs already (it may have
    /// started before the provider changed its keys; the new one follows it).
    /// Returns once that fetch has finished, with what it came to, or when
    /// `wait` has passed (``Refetch/running``). Concurrent calls share fetches.
    func refetch(wait: Duration) -> Refetch {
        guard provider.jwksURL != nil else { return .finished(FetchOutcome(fetched: true, keys: 0, withdrawn: 0)) }
        let deadline = LockDeadline(after: wait)
        let (target, start): (Int, Bool) = state.withLock { state in
            if state.fetching {
                state.again = true
                return (state.fetches + 1, false)
            }
            state.fetching = true
            state.fetches += 1
            return (state.fetches, true)
        }
        if start {
            let thread = Thread { [self] in download() }
            thread.name = "ferry-jwks-refetch"
            thread.start()
        }
        return state.withLockWaiting(until: deadline) { state, wake in
            if state.finished >= target, let last = state.last { return .finished(last) }
            return wake == .timedOut || state.stopped ? .running : nil
        }
    }

    /// Fetches, keeps and logs the key set; called by whoever set `fetching`.
    /// Fetches again while a refetch asked for one during the last.
    private func download() {
        var more = true
        while more {
            more = downloadOnce()
            state.broadcast()
        }
    }

    /// One fetch; whether another was asked for meanwhile (and is now counted
    /// as started). It counts as finished only once the verified-token cache
    /// has dropped what the withdrawn keys verified.
    private func downloadOnce() -> Bool {
        let result = Self.download(provider, timeout: timing.fetchTimeout)
        let outcome: FetchOutcome
        var withdrawn: [String] = []
        switch result {
        case .failure(let error):
            outcome = FetchOutcome(fetched: false, keys: 0, withdrawn: 0, reason: error.reason)
        case .success(let (keys, _)):
            withdrawn = state.withLock { state in
                let kept = Set(keys.map(\.identity))
                let gone = state.fetched.map(\.identity).filter { !kept.contains($0) }
                state.fetched = keys
                state.fetchedAt = .now
                return gone
            }
            outcome = FetchOutcome(fetched: true, keys: keys.count, withdrawn: withdrawn.count)
        }
        switch result {
        case .success(let (keys, skipped)):
            // Why a signing key the provider publishes is not used: said at info, as each
            // fetch is (encryption keys, which many providers list, go unsaid).
            var metadata: Logger.Metadata = ["issuer": "\(provider.issuer)", "keys": "\(keys.count)"]
            if !skipped.isEmpty { metadata["skipped"] = "\(skipped.joined(separator: "; "))" }
            logger.info("JWKS fetched", metadata: metadata)
        case .failure(let error):
            logger.warning("JWKS fetch failed; keeping the keys held", metadata: ["issuer": "\(provider.issuer)", "reason": "\(error.reason)"])
        }
        if !withdrawn.isEmpty {
            logger.notice(
                "JWT keys withdrawn; tokens verified with them are verified again",
                metadata: [
                    "issuer": "\(provider.issuer)", "keys": "\(withdrawn.map { $0.split(separator: " ").first.map(String.init) ?? "" })",
                ])
            onWithdrawn(withdrawn.map { identity(of: $0) })
        }
        let (more, woken): (Bool, [ParkingTicket]) = state.withLock { state in
            state.finished += 1
            state.last = outcome
            let more = state.again && !state.stopped
            state.again = false
            if more { state.fetches += 1 } else { state.fetching = false }
            return (more, Self.takeWoken(&state, more: more))
        }
        for ticket in woken { ticket.wake() }
        return more
    }

    /// A key's identity qualified by the provider's issuer, as ``VerifiedJWT`` carries it.
    func identity(of key: String) -> String { provider.issuer + "\u{0}" + key }

    /// The URL's key set, read, with a sentence for each key left out that could have
    /// signed (a symmetric key, an algorithm not accepted); keys for encryption (`use`
    /// other than `sig`) are left out without one.
    private static func download(_ provider: JWTProvider, timeout: Duration) -> Result<
        (keys: [VerifyingKey], skipped: [String]), KeyImportError
    > {
        guard let url = provider.jwksURL else { return .success(([], [])) }
        switch JWKSFetch.text(url, timeout: timeout) {
        case .failure(let error): return .failure(error)
        case .success(let text):
            do {
                return .success(try KeyImport.keys(jwks: text, algorithms: provider.algorithms, symmetricAllowed: false))
            } catch let error as KeyImportError {
                return .failure(KeyImportError("\(url.redacted): \(error.reason)"))
            } catch {
                return .failure(KeyImportError("\(url.redacted): \(error)"))
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
            fetchNow()
        }
    }

    /// Ends the background refresh.
    func stop() {
        let woken = state.withLock { state in
            state.stopped = true
            return Self.takeWoken(&state, more: false)
        }
        state.broadcast()
        for ticket in woken { ticket.wake() }
    }

    /// How many fetches were started, and how many have finished.
    var fetches: Int { state.withLock { $0.fetches } }
    var finishedFetches: Int { state.withLock { $0.finished } }
}
