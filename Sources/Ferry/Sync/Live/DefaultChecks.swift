import FerryBase
import FerryHTTP

/// One feed check for the default-stream waiters of many users (issue 46,
/// "One query per change, whatever the number of readers"): when a commit to
/// a set wakes ten thousand collaborators who each long-poll their default
/// stream, the first to resume runs its check, which also reads the window's
/// changed rows with the columns that say who may read each
/// (``ChangesPlan/windowTables``, ``DefaultWindow``), and the others whose
/// own page would hold exactly the same rows take its page.
///
/// A waiter takes another user's page only when all of these hold:
/// - the check started at or after the waiter's epoch, as in ``SharedChecks``
///   (its snapshot holds the commit that woke the waiter), from the same
///   cursor, resources and page size;
/// - the waiter's bearer is in this instance's verified cache, naming the
///   user, or was checked within the cache's lifetime before the check
///   ended (``TokenVouchers``): the first to find it lapsed looks up every
///   default-stream waiter's token, and those that asked lately, in one
///   statement, and that lookup stands for the checks that ended within a
///   lifetime after it began, as ``StreamChecks`` does per stream (a
///   fan-out whose answers outlast the cache then costs one lookup, not one
///   each time the cache lapses);
/// - the user's *evidence*: the scope rows they read in a snapshot whose
///   frontier is after the cursor (their own check's, or a shared page's
///   whose window proved them unchanged). Changes of who reads a scope row
///   are then all in the window's snapshot: writes of the row since the
///   cursor (read up to and past the frontier), and access grants and
///   revocations since the cursor (`ferry.access_changed_users`);
/// - the window names neither user among those whose access changed, every
///   row's readers are told by its paths from those scope rows and the
///   user's id (``DefaultWindow/readable(by:scopes:owned:)``), and the rows the
///   waiter's user reads are exactly those the check's user read (whose own
///   count of them matched its page's entries).
/// Anything else checks for itself. Correctness over coverage: a wrong
/// "cannot tell" costs a check, a wrong "same rows" would give a row to a
/// user who may not read it, or keep one from a user who may.
final class DefaultChecks: Sendable {
    /// Checks of one cursor, page size and resources are shared.
    struct Key: Hashable, Sendable {
        let generation: Int
        /// The cursor's token.
        let since: String
        let limit: Int
        let resources: [String]
    }

    /// A check as other users' waiters may take it.
    struct Offer: Sendable {
        let check: FeedCheck
        let window: DefaultWindow?
        /// The rows of the window its user's page holds, as its user's scope
        /// rows tell; nil when nobody else may take it.
        let rows: [Int]?
    }

    /// The scope rows a user read, those of them they read as their owner,
    /// and the frontier of the snapshot they read them in.
    private struct Evidence {
        let generation: Int
        let scopes: Set<WaiterRegistry.ScopeKey>
        let owned: Set<WaiterRegistry.ScopeKey>
        let frontier: UInt64
    }

    private typealias Flight = CheckFlight<Offer>

    /// The checks on offer, and the bulk lookups of the default-stream waiters' tokens (named ``lookups``).
    private let shelf = CheckShelf<Key, Offer>(
        perKey: DefaultChecks.flightsPerKey, recheckSeconds: StreamChecks.recheckSeconds, recentSeconds: StreamChecks.recentSeconds)

    /// The name of the default stream's token lookups on the shelf.
    private static let lookups = "default"

    /// Each user's evidence (``note(_:generation:scopes:owned:frontier:)``).
    private let users = Locked<[String: Evidence]>([:])

    /// A key keeps at most this many checks on offer: one per set of rows its waiters read.
    static let flightsPerKey = 8
    /// How many users' evidence is kept; past it, all is forgotten (each user's next check loads it again).
    static let evidenceCapacity = 200_000

    /// Checks on offer now (tests).
    var count: Int { shelf.count }

    /// Whether a check for `user` from the cursor at `since` should load the
    /// scope rows they read: without evidence past the cursor, their next wake
    /// could take nobody's page.
    func wantsScopes(_ user: String?, generation: Int, since: UInt64) -> Bool {
        guard let user else { return true }
        return users.withLock { users in
            guard let evidence = users[user], evidence.generation == generation else { return true }
            return evidence.frontier <= since
        }
    }

    /// `user` read `scopes` (`owned`: those as their owner) in a snapshot whose frontier was
    /// `frontier` (a lower bound: every change they missed has an xid at or above it).
    func note(
        _ user: String, generation: Int, scopes: Set<WaiterRegistry.ScopeKey>, owned: Set<WaiterRegistry.ScopeKey>, frontier: UInt64
    ) {
        users.withLock { users in
            if users.count >= Self.evidenceCapacity, users[user] == nil { users.removeAll() }
            users[user] = Evidence(generation: generation, scopes: scopes, owned: owned, frontier: frontier)
        }
    }

    /// The check for a default-stream waiter of `key` at the cursor whose xid
    /// is `since`: a page another user's check made, when it is this user's
    /// too, else `run()`, offered to the others. `user` names the user the
    /// bearer's cached check names (nil when none does); `recheck` looks up
    /// the default-stream waiters' tokens in bulk, with those of `token`s
    /// that asked lately.
    func check(
        _ key: Key, since: UInt64, token: String? = nil, user userNow: () -> String?,
        recheck: (_ recent: [String]) -> TokenVouchers, ticket: any LiveTicket, registry: WaiterRegistry,
        run: () throws -> (check: FeedCheck, window: DefaultWindow?)
    ) throws -> (check: FeedCheck, shared: Bool) {
        let from = registry.checkFrom(ticket)
        if let token { shelf.asked(Self.lookups, token: token, at: MonotonicClock.now()) }
        var user: String?
        var asked = false
        var seen: Set<ObjectIdentifier> = []
        // Found, or else made, under one lock: waiters resuming together find the first one's check. A
        // waiter whose rows differ from those of every check on offer looks again for one made meanwhile
        // (by a waiter of its group), and makes its own only when there is none.
        while true {
            let examined = seen
            let found: [Flight]
            let taken = shelf.take(
                key, epoch: { registry.epoch },
                choose: { flights -> [Flight]? in
                    let open = from.map { from in flights.filter { $0.startedAt >= from && !examined.contains(ObjectIdentifier($0)) } } ?? []
                    return open.isEmpty ? nil : open.reversed()
                })
            switch taken {
            case .made(let made): return try lead(made, key: key, since: since, run: run)
            case .found(let flights): found = flights
            }
            if !asked {
                asked = true
                user = userNow()
                if user == nil, found.contains(where: { !$0.isDone }) {
                    // The leaders' queries run: the lookup of the waiters' tokens runs beside them.
                    shelf.recheckOnce(Self.lookups, recheck)
                    user = userNow()
                }
                // No evidence of the user's, or no token a lookup could vouch for: no page of another's is theirs.
                let alone = user.map { self.evidence($0, generation: key.generation, after: since) == nil } ?? (token == nil)
                if alone {
                    return try lead(shelf.offer(key, epoch: { registry.epoch }), key: key, since: since, run: run)
                }
            }
            for flight in found {
                seen.insert(ObjectIdentifier(flight))
                guard case .success(let offer) = flight.answer(), let rows = offer.rows, let window = offer.window,
                    let user = user
                        ?? shelf.user(of: token, name: Self.lookups, checkEndedAt: window.endedAt, cached: userNow, recheck: recheck),
                    let evidence = evidence(user, generation: key.generation, after: since),
                    let own = window.readable(by: user, scopes: evidence.scopes, owned: evidence.owned), own.rows == rows
                else { continue }
                advance(user, evidence, to: window.frontier, holds: own.scopesHold)
                return (offer.check.taken(by: user), true)
            }
        }
    }

    /// Runs the check of `flight`, which is on offer, and finishes it.
    private func lead(
        _ flight: Flight, key: Key, since: UInt64, run: () throws -> (check: FeedCheck, window: DefaultWindow?)
    ) throws -> (check: FeedCheck, shared: Bool) {
        let result = Result { () throws -> Offer in
            let (check, window) = try run()
            guard let rows = leaderRows(check, window, key: key, since: since) else { return Offer(check: check, window: window, rows: nil) }
            // A page others may take is encoded once, for all of them and its own user (``EncodedPage``, as a
            // stream's page is): a commit that wakes ten thousand collaborators' default streams was ten
            // thousand encodings of one page.
            return Offer(check: check.with(page: check.page.encodedOnce()), window: window, rows: rows)
        }
        flight.finish(result)
        do {
            return (try result.get().check, false)
        } catch {
            // A failure answers those already waiting on it, never a later waiter.
            shelf.withdraw(flight, of: key)
            throw error
        }
    }

    /// The rows of `window` the check's own user read, when others may take
    /// its page: a page of entries, and its user's evidence telling the same
    /// number of rows as the page holds (a check of the reasoning against
    /// Row Level Security's own answer).
    private func leaderRows(_ check: FeedCheck, _ window: DefaultWindow?, key: Key, since: UInt64) -> [Int]? {
        guard let window, let user = check.user, let changes = check.page.changes,
            let evidence = evidence(user, generation: key.generation, after: since),
            let own = window.readable(by: user, scopes: evidence.scopes, owned: evidence.owned), !own.rows.isEmpty,
            let entries = SharedStreamPage.arrayElements(changes)
        else { return nil }
        let expected = check.page.hasMore ? key.limit : own.rows.count
        guard entries.count == expected, !check.page.hasMore || own.rows.count > key.limit else { return nil }
        advance(user, evidence, to: window.frontier, holds: own.scopesHold)
        return own.rows
    }

    private func evidence(_ user: String, generation: Int, after since: UInt64) -> Evidence? {
        users.withLock { users in
            guard let evidence = users[user], evidence.generation == generation, evidence.frontier > since else { return nil }
            return evidence
        }
    }

    /// A window proved `evidence`'s scope rows still the user's in its
    /// snapshot (`holds`): they stand at its frontier. Else they are dropped,
    /// and the user's next check loads them again.
    private func advance(_ user: String, _ evidence: Evidence, to frontier: UInt64, holds: Bool) {
        users.withLock { users in
            guard holds else {
                users[user] = nil
                return
            }
            let now = users[user]
            guard now == nil || now!.frontier <= frontier else { return }
            users[user] = Evidence(
                generation: evidence.generation, scopes: evidence.scopes, owned: evidence.owned, frontier: frontier)
        }
    }
}
