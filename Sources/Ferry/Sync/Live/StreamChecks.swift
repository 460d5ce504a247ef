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
///   request skip the token lookup), naming the user, or was checked within
///   the cache's lifetime before the check ended (``TokenVouchers``). A
///   cache lasts a second by default, so the first waiter to find its token
///   lapsed looks up the tokens of every waiter on the stream in one
///   statement (``PostgresGateway/recheck(tokens:)``), and the others wait
///   for it. Whatever that lookup vouched for stands for the checks that
///   ended within a lifetime after it began: a fan-out whose answers outlast
///   the cache (100,000 devices over 8 instances on two cores) costs one
///   lookup, not one each time the cache lapses, which slowed the answers
///   and so made more lookups (bench/live/README.md).
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

    /// The checks on offer, and the bulk lookups of each stream's tokens, by stream (`name:id`).
    private let shelf = CheckShelf<Key, SharedStreamPage>(
        perKey: StreamChecks.flightsPerStream, recheckSeconds: StreamChecks.recheckSeconds, recentSeconds: StreamChecks.recentSeconds)

    /// Per reader, the highest frontier of a snapshot in which they read the root.
    private let readers = Locked<[Reader: UInt64]>([:])

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
    var count: Int { shelf.count }

    /// The check for a waiter of `key` at cursor `request`: a page another
    /// user's check made, when it may be this user's, else `run()`, offered
    /// to the others. `user` names the user the bearer's cached check names
    /// (nil when none does); `recheck` looks up the stream's tokens in bulk,
    /// with those of `token`s that asked lately.
    func check(
        _ key: Key, request: ChangesRequest, token: String? = nil, user userNow: () -> String?,
        recheck: (_ recent: [String]) -> TokenVouchers, ticket: any LiveTicket, registry: WaiterRegistry,
        run: () throws -> SharedStreamPage
    ) throws -> (check: FeedCheck, shared: Bool) {
        let since = request.since.afterXID
        let from = registry.checkFrom(ticket)
        let now = MonotonicClock.now()
        if let token { shelf.asked(key.stream, token: token, at: now) }
        // The latest cursor at or before this one: the fewest entries to cut away.
        let taken = shelf.take(
            key, since: since, epoch: { registry.epoch },
            choose: { flights in
                from.flatMap { from in flights.filter { $0.startedAt >= from && $0.since <= since }.max(by: { $0.since < $1.since }) }
            })
        if case .found(let found) = taken {
            var user = userNow()
            if user == nil, !found.isDone {
                // The leader's query runs: the lookup of the stream's tokens runs beside it.
                shelf.recheckOnce(key.stream, recheck)
                user = userNow()
            }
            if case .success(let shared) = found.answer(),
                let user = user ?? shelf.user(of: token, name: key.stream, checkEndedAt: shared.endedAt, cached: userNow, recheck: recheck),
                evidence(Reader(user: user, generation: key.generation, stream: key.stream), after: since),
                let page = shared.page(for: request, user: user)
            {
                note(Reader(user: user, generation: key.generation, stream: key.stream), readAt: shared.guardAnswer.frontier)
                return (FeedCheck(page: page, frontier: shared.frontier, held: shared.held, user: user, scopes: nil), true)
            }
        }
        let flight: CheckFlight<SharedStreamPage>
        switch taken {
        case .made(let made): flight = made
        case .found: flight = shelf.offer(key, since: since, epoch: { registry.epoch })
        }
        let result = Result { try run() }
        flight.finish(result)
        let shared: SharedStreamPage
        do {
            shared = try result.get()
        } catch {
            // A failure answers those already waiting on it, never a later waiter.
            shelf.withdraw(flight, of: key)
            throw error
        }
        if let leader = shared.leader {
            let reader = Reader(user: leader, generation: key.generation, stream: key.stream)
            if shared.guardAnswer.readable {
                note(reader, readAt: shared.guardAnswer.frontier)
            } else {
                readers.withLock { _ = $0.removeValue(forKey: reader) }
            }
        }
        return (FeedCheck(page: shared.page, frontier: shared.frontier, held: shared.held, user: shared.leader, scopes: nil), false)
    }

    /// Whether `reader` read the root in a snapshot whose frontier is after `since`.
    private func evidence(_ reader: Reader, after since: UInt64) -> Bool {
        readers.withLock { readers in readers[reader].map { $0 > since } ?? false }
    }

    private func note(_ reader: Reader, readAt frontier: UInt64) {
        readers.withLock { readers in
            if readers.count >= Self.evidenceCapacity, readers[reader] == nil { readers.removeAll() }
            readers[reader] = max(readers[reader] ?? 0, frontier)
        }
    }
}
