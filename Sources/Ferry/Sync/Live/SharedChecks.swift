import FerryBase
import FerryHTTP

/// One feed check for every waiter that would make the same one: when a
/// commit wakes many long polls and streams of one caller at one cursor (a
/// user's devices, an app's tabs, a benchmark's ten thousand), the first to
/// resume runs the check and the others take its answer, instead of a query
/// each (issue 46, "One query per change").
///
/// Two checks are the same when the caller's credential (its hash: the same
/// bearer, so the same user and claims for Row Level Security), the schema
/// load, the walk decisions, the cursor, the page size and the resources are.
/// A check answers a waiter only if it started at or after the waiter's
/// epoch (``WaiterRegistry/checkFrom(_:)``): the epoch moves under the lock
/// that wakes, after the commit that woke it, so such a check's snapshot
/// holds that commit. A check that started earlier is never reused: the
/// waiter's own commit might be missing from it.
///
/// A registration takes the epoch of the moment too; reusing a check that
/// started before it is safe because every hint delivered since that check
/// started would have moved the epoch, and every later hint finds the waiter
/// registered and wakes it (docs/changes-feed.md, "Fan-out").
final class SharedChecks: Sendable {
    struct Key: Hashable, Sendable {
        let credential: String
        let generation: Int
        let walks: ChangesPlan.Walks
        let since: String
        let limit: Int
        let resources: [String]
        /// The stream a subscription's waiter follows (`name:id`), nil for the default
        /// stream: the same token and cursor on another stream is another question.
        var stream: String? = nil
    }

    /// One check on offer per key: the latest (``CheckShelf``).
    private let shelf = CheckShelf<Key, FeedCheck>(perKey: 1)

    /// Checks on offer now (tests, /metrics).
    var count: Int { shelf.count }

    /// The check for the waiter of `ticket`: another waiter's when it is the
    /// same and started late enough, else `run()`, offered to the others.
    /// `shared` says which (for the request log and the counts).
    func check(
        _ key: Key, ticket: any LiveTicket, registry: WaiterRegistry,
        run: () throws -> FeedCheck
    ) throws -> (check: FeedCheck, shared: Bool) {
        // Not registered (removed meanwhile): nothing to share on.
        guard let from = registry.checkFrom(ticket) else { return (try run(), false) }
        // The epoch is read after the caller's own, so a check made now starts at least at `from`.
        let made: CheckFlight<FeedCheck>
        switch shelf.take(key, epoch: { registry.epoch }, choose: { $0.last.flatMap { $0.startedAt >= from ? $0 : nil } }) {
        case .found(let flight): return (try flight.answer().get(), true)
        case .made(let flight): made = flight
        }
        let result = Result { try run() }
        made.finish(result)
        if case .failure = result { shelf.withdraw(made, of: key) }
        return (try result.get(), false)
    }
}
