import FerryBase
import FerryHTTP

/// One feed check for the waiters of many users on one stream (issue 46, "One
/// query per change, whatever the number of readers"): when a commit to a
/// stream wakes ten thousand subscribers of a public set, or a teacher's set
/// followed by a class, the first to resume runs its check and the others
/// take its page (``SharedStreamPage``), without a query each.
///
/// A waiter takes another's page only when all of these hold:
/// - the check started at or after the waiter's epoch, as in
///   ``SharedChecks`` (its snapshot holds the commit that woke the waiter);
/// - the same stream, resources and page size, from a cursor at or before
///   the waiter's own (after it, only a complete page);
/// - the waiter's bearer is in this instance's verified cache (what lets any
///   request skip the token lookup), naming the user. A cache lasts a second
///   by default, so the first waiter to find its token lapsed looks up the
///   tokens of every waiter on the stream in one statement
///   (``PostgresGateway/recheck(tokens:)``), and the others wait for it.
///   That lookup also names the tokens that asked about the stream within
///   ``recentSeconds``: a device that long-polls is between two requests,
///   answered and not yet back, for part of every round, and without its
///   token in the lookup it would come back to a lapsed check and make a
///   check of its own (the teacher's benchmark, bench/live/README.md);
/// - the user read the stream's root row in a snapshot whose frontier is
///   after the waiter's cursor (their own check's, or a shared page's they
///   took), and the check's guard (``ChangesPlan/streamGuard``), read after
///   its page (or beside an empty one, in its snapshot), found nothing since
///   the check's cursor that decides who reads the root (the root row, its
///   public grants and revocations), nor any grant or revocation of this
///   user or of the check's own caller. So the user still reads the root in
///   the check's snapshot, and their own page would hold exactly the same
///   entries.
///
/// Each waiter that takes a page records the check's snapshot as its user's
/// new evidence, so the next commit's page can be taken too; a check of
/// their own that finds the root unreadable drops it.
final class StreamChecks: Sendable {
    /// Checks of one stream, resources and page size are shared.
    struct Key: Hashable, Sendable {
        let generation: Int
        /// `name:id`.
        let stream: String
        let limit: Int
        let resources: [String]
    }

    /// A user reads a stream's root: evidence is keyed by both.
    private struct Reader: Hashable {
        let user: String
        let generation: Int
        let stream: String
    }

    private typealias Flight = CheckFlight<SharedStreamPage>

    /// One bulk lookup of a stream's tokens, running or lately done: its
    /// answer is only that it is done.
    private typealias Recheck = CheckFlight<Void>

    private struct State {
        var flights: [Key: [Flight]] = [:]
        /// By stream (`name:id`).
        var rechecks: [String: Recheck] = [:]
        /// By stream (`name:id`), the bearers (token hashes) that asked lately, and when.
        var recent: [String: [String: Double]] = [:]
        /// Per reader, the highest frontier of a snapshot in which they read the root.
        var evidence: [Reader: UInt64] = [:]
        var madeSinceSweep = 0
    }

    private let state = Locked(State())

    /// A stream keeps at most this many checks on offer: waiters of one
    /// commit are at a few cursors, and the check from the earliest serves
    /// the later ones.
    static let flightsPerStream = 8
    /// How many readers' evidence is kept; past it, all is forgotten (each
    /// reader's next check finds it again).
    static let evidenceCapacity = 200_000

    /// A stream's tokens are looked up again at most this often: a waiter
    /// whose token the last lookup did not find checks for itself.
    static let recheckSeconds = 0.25

    /// How long a bearer that asked about a stream stays in its lookups: a
    /// long poll's round trip, answer to next request, and then some.
    static let recentSeconds = 2.0

    /// Checks on offer now (tests).
    var count: Int { state.withLock { $0.flights.values.reduce(0) { $0 + $1.count } } }

    /// The check for a waiter of `key` at cursor `request`: a page another
    /// user's check made, when it may be this user's, else `run()`, offered
    /// to the others. `user` names the user the bearer's cached check names
    /// (nil when none does); `recheck` looks up the stream's tokens in bulk,
    /// with those of `token`s that asked lately.
    func check(
        _ key: Key, request: ChangesRequest, token: String? = nil, user userNow: () -> String?,
        recheck: (_ recent: [String]) -> Void, ticket: any LiveTicket, registry: WaiterRegistry,
        run: () throws -> SharedStreamPage
    ) throws -> (check: FeedCheck, shared: Bool) {
        let since = request.since.afterXID
        let from = registry.checkFrom(ticket)
        let now = MonotonicClock.now()
        // Found, or else made, under one lock: waiters resuming together find the first one's check.
        let (found, made) = state.withLock { state -> (Flight?, Flight?) in
            if let token { state.recent[key.stream, default: [:]][token] = now }
            // The latest cursor at or before this one: the fewest entries to cut away.
            if let from, let flight = state.flights[key]?.filter({ $0.startedAt >= from && $0.since <= since }).max(by: { $0.since < $1.since }) {
                return (flight, nil)
            }
            return (nil, Self.offer(key, since: since, epoch: registry.epoch, in: &state))
        }
        if let found {
            var user = userNow()
            if user == nil {
                recheckOnce(key.stream, recheck)
                user = userNow()
            }
            if let user, evidence(Reader(user: user, generation: key.generation, stream: key.stream), after: since),
                case .success(let shared) = found.answer(), let page = shared.page(for: request, user: user)
            {
                note(Reader(user: user, generation: key.generation, stream: key.stream), readAt: shared.guardAnswer.frontier)
                return (FeedCheck(page: page, frontier: shared.frontier, held: shared.held, user: user, scopes: nil), true)
            }
        }
        let flight = made ?? state.withLock { state in Self.offer(key, since: since, epoch: registry.epoch, in: &state) }
        let result = Result { try run() }
        flight.finish(result)
        let shared: SharedStreamPage
        do {
            shared = try result.get()
        } catch {
            // A failure answers those already waiting on it, never a later waiter.
            state.withLock { state in state.flights[key]?.removeAll { $0 === flight } }
            throw error
        }
        if let leader = shared.leader {
            let reader = Reader(user: leader, generation: key.generation, stream: key.stream)
            if shared.guardAnswer.readable {
                note(reader, readAt: shared.guardAnswer.frontier)
            } else {
                state.withLock { _ = $0.evidence.removeValue(forKey: reader) }
            }
        }
        return (FeedCheck(page: shared.page, frontier: shared.frontier, held: shared.held, user: shared.leader, scopes: nil), false)
    }

    /// Whether `reader` read the root in a snapshot whose frontier is after `since`.
    private func evidence(_ reader: Reader, after since: UInt64) -> Bool {
        state.withLock { state in state.evidence[reader].map { $0 > since } ?? false }
    }

    /// Runs `recheck` unless it runs now (then waits for it) or ran within
    /// ``recheckSeconds``, giving it the bearers that asked within ``recentSeconds``.
    private func recheckOnce(_ stream: String, _ recheck: (_ recent: [String]) -> Void) {
        let (entry, recent) = state.withLock { state -> (Recheck, [String]?) in
            let now = MonotonicClock.now()
            if let entry = state.rechecks[stream], !entry.isDone || now - entry.madeAt < Self.recheckSeconds {
                return (entry, nil)
            }
            // No epoch decides who may take a lookup: any waiter on the stream may, while it is recent.
            let entry = Recheck(startedAt: 0)
            state.rechecks[stream] = entry
            let kept = state.recent[stream]?.filter { now - $0.value < Self.recentSeconds }
            state.recent[stream] = kept?.isEmpty == false ? kept : nil
            return (entry, kept.map { Array($0.keys) } ?? [])
        }
        guard let recent else {
            _ = entry.answer()
            return
        }
        recheck(recent)
        entry.finish(.success(()))
    }

    private func note(_ reader: Reader, readAt frontier: UInt64) {
        state.withLock { state in
            if state.evidence.count >= Self.evidenceCapacity, state.evidence[reader] == nil { state.evidence.removeAll() }
            state.evidence[reader] = max(state.evidence[reader] ?? 0, frontier)
        }
    }

    /// A new check from `since`, on offer from now: the latest few of each key are kept.
    private static func offer(_ key: Key, since: UInt64, epoch: UInt64, in state: inout State) -> Flight {
        let flight = Flight(startedAt: epoch, since: since)
        var flights = state.flights[key] ?? []
        if flights.count >= flightsPerStream { flights.removeFirst() }
        flights.append(flight)
        state.flights[key] = flights
        state.madeSinceSweep += 1
        if state.madeSinceSweep >= SharedChecks.sweepEvery { sweep(&state) }
        return flight
    }

    private static func sweep(_ state: inout State) {
        let now = MonotonicClock.now()
        for (key, flights) in state.flights {
            let kept = flights.filter { !$0.isDone || now - $0.madeAt < SharedChecks.keepSeconds }
            state.flights[key] = kept.isEmpty ? nil : kept
        }
        state.rechecks = state.rechecks.filter { !$0.value.isDone || now - $0.value.madeAt < recheckSeconds }
        state.recent = state.recent.compactMapValues { tokens in
            let kept = tokens.filter { now - $0.value < recentSeconds }
            return kept.isEmpty ? nil : kept
        }
        state.madeSinceSweep = 0
    }
}
