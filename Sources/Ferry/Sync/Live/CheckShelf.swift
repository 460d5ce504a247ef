import FerryBase
import FerryHTTP

/// The feed checks on offer to other waiters, by key, and the bulk token
/// lookups beside them: what ``SharedChecks``, ``StreamChecks`` and
/// ``DefaultChecks`` share. Each of them keeps its own rules of which waiter
/// may take which check (the epoch, the cursor, the user's evidence); the
/// shelf only keeps the checks:
/// - a key holds its latest `perKey` checks, the oldest dropped first;
/// - a finished check stays on offer ``keepSeconds`` (the waiters it answers
///   resume within the moment of a fan-out; later ones have later epochs),
///   and finished ones are swept once ``sweepEvery`` more were made;
/// - a failed check is withdrawn: it answers those already waiting on it,
///   never a later waiter;
/// - one bulk token lookup per name runs at once, and at most every
///   `recheckSeconds`, with the bearers that asked within `recentSeconds`;
///   the latest one's answer (``TokenVouchers``) is kept for the checks it
///   vouches for, ``keepSeconds`` like a check, and tells a waiter whose
///   bearer lapsed from the cache who it is (``user(of:name:checkEndedAt:cached:recheck:)``).
final class CheckShelf<Key: Hashable & Sendable, Answer: Sendable>: Sendable {
    typealias Flight = CheckFlight<Answer>

    /// One bulk lookup of tokens, running or lately done, and what it vouched for.
    private typealias Recheck = CheckFlight<TokenVouchers>

    private struct State {
        var flights: [Key: [Flight]] = [:]
        /// By name (a stream's `name:id`).
        var rechecks: [String: Recheck] = [:]
        /// By name, the bearers (token hashes) that asked lately, and when.
        var recent: [String: [String: Double]] = [:]
        var madeSinceSweep = 0
    }

    private let state = Locked(State())
    let perKey: Int
    let recheckSeconds: Double
    let recentSeconds: Double

    /// How long a finished check stays on offer.
    static var keepSeconds: Double { 5.0 }
    /// Finished checks are swept once this many more were made.
    static var sweepEvery: Int { 1_024 }

    init(perKey: Int, recheckSeconds: Double = 0, recentSeconds: Double = 0) {
        self.perKey = perKey
        self.recheckSeconds = recheckSeconds
        self.recentSeconds = recentSeconds
    }

    /// Checks on offer now (tests, /metrics).
    var count: Int { state.withLock { $0.flights.values.reduce(0) { $0 + $1.count } } }

    /// What ``take(_:since:epoch:choose:)`` gave.
    enum Taken<Found> {
        /// What the waiter's rules chose among the checks on offer.
        case found(Found)
        /// A new check, on offer: the waiter runs it and finishes it.
        case made(Flight)
    }

    /// What `choose` takes among the checks of `key` on offer (oldest
    /// first), else a new check from `since`, started at `epoch()`, on offer
    /// from now. Under one lock: waiters resuming together find the first
    /// one's check.
    func take<Found>(_ key: Key, since: UInt64 = 0, epoch: () -> UInt64, choose: ([Flight]) -> Found?) -> Taken<Found> {
        state.withLock { state in
            if let found = choose(state.flights[key] ?? []) { return .found(found) }
            return .made(offer(key, since: since, epoch: epoch(), in: &state))
        }
    }

    /// A new check of `key` from `since`, on offer from now.
    func offer(_ key: Key, since: UInt64 = 0, epoch: () -> UInt64) -> Flight {
        state.withLock { state in offer(key, since: since, epoch: epoch(), in: &state) }
    }

    /// `flight` failed: no later waiter takes it.
    func withdraw(_ flight: Flight, of key: Key) {
        state.withLock { state in
            state.flights[key]?.removeAll { $0 === flight }
            if state.flights[key]?.isEmpty == true { state.flights[key] = nil }
        }
    }

    /// `token` asked about `name` at `now`: the next lookup of `name` names it.
    func asked(_ name: String, token: String, at now: Double) {
        state.withLock { state in state.recent[name, default: [:]][token] = now }
    }

    /// The latest bulk lookup of `name` that is done, if any.
    func lookup(_ name: String) -> TokenVouchers? {
        guard let entry = state.withLock({ $0.rechecks[name] }), entry.isDone, case .success(let vouchers) = entry.answer() else {
            return nil
        }
        return vouchers
    }

    /// Runs `recheck` for `name` unless one runs now (then waits for it) or
    /// ran within `recheckSeconds`, giving it the bearers that asked about
    /// `name` within `recentSeconds` (``asked(_:token:at:)``).
    /// - Returns: what that lookup (this one, the running one, or the recent one) vouched for.
    @discardableResult
    func recheckOnce(_ name: String, _ recheck: (_ recent: [String]) -> TokenVouchers) -> TokenVouchers {
        let (entry, recent) = state.withLock { state -> (Recheck, [String]?) in
            let now = MonotonicClock.now()
            if let entry = state.rechecks[name], !entry.isDone || now - entry.madeAt < recheckSeconds {
                return (entry, nil)
            }
            // No epoch decides who may take a lookup: any waiter may, while it is recent.
            let entry = Recheck(startedAt: 0)
            state.rechecks[name] = entry
            let kept = state.recent[name]?.filter { now - $0.value < recentSeconds }
            state.recent[name] = kept?.isEmpty == false ? kept : nil
            return (entry, kept.map { Array($0.keys) } ?? [])
        }
        guard let recent else {
            guard case .success(let vouchers) = entry.answer() else { return .none }
            return vouchers
        }
        let vouchers = recheck(recent)
        entry.finish(.success(vouchers))
        return vouchers
    }

    /// The user a waiter's bearer `token` names for a check of `name` that
    /// ended at `instant`: as the token cache says now (`cached`), else as
    /// the latest lookup of `name`'s tokens vouched for it then
    /// (``TokenVouchers``), else as a new lookup (``recheckOnce(_:_:)``) and
    /// the cache say. A lookup made after the check ended vouches for its
    /// takers however long their answers take: a fan-out whose answers
    /// outlast the cache costs one lookup, not one each time the cache
    /// lapses (``StreamChecks``, ``DefaultChecks``).
    func user(
        of token: String?, name: String, checkEndedAt instant: ContinuousClock.Instant, cached: () -> String?,
        recheck: (_ recent: [String]) -> TokenVouchers
    ) -> String? {
        if let user = cached() { return user }
        if let token, let user = lookup(name)?.user(for: token, checkEndedAt: instant) { return user }
        let lookup = recheckOnce(name, recheck)
        return cached() ?? token.flatMap { lookup.user(for: $0, checkEndedAt: instant) }
    }

    private func offer(_ key: Key, since: UInt64, epoch: UInt64, in state: inout State) -> Flight {
        let flight = Flight(startedAt: epoch, since: since)
        var flights = state.flights[key] ?? []
        if flights.count >= perKey { flights.removeFirst() }
        flights.append(flight)
        state.flights[key] = flights
        state.madeSinceSweep += 1
        if state.madeSinceSweep >= Self.sweepEvery { sweep(&state) }
        return flight
    }

    private func sweep(_ state: inout State) {
        let now = MonotonicClock.now()
        for (key, flights) in state.flights {
            let kept = flights.filter { !$0.isDone || now - $0.madeAt < Self.keepSeconds }
            state.flights[key] = kept.isEmpty ? nil : kept
        }
        state.rechecks = state.rechecks.filter { !$0.value.isDone || now - $0.value.madeAt < max(recheckSeconds, Self.keepSeconds) }
        state.recent = state.recent.compactMapValues { tokens in
            let kept = tokens.filter { now - $0.value < recentSeconds }
            return kept.isEmpty ? nil : kept
        }
        state.madeSinceSweep = 0
    }
}
