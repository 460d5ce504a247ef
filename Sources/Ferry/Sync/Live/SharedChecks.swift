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

    private typealias Flight = CheckFlight<FeedCheck>

    private struct State {
        var flights: [Key: Flight] = [:]
        var madeSinceSweep = 0
    }

    private let state = Locked(State())

    /// How long a finished check stays on offer: the waiters it answers
    /// resume within the moment of a fan-out; later ones have later epochs.
    static let keepSeconds = 5.0
    /// Finished checks are swept once this many more were made.
    static let sweepEvery = 1_024

    /// Checks on offer now (tests, /metrics).
    var count: Int { state.withLock { $0.flights.count } }

    /// The check for the waiter of `ticket`: another waiter's when it is the
    /// same and started late enough, else `run()`, offered to the others.
    /// `shared` says which (for the request log and the counts).
    func check(
        _ key: Key, ticket: any LiveTicket, registry: WaiterRegistry,
        run: () throws -> FeedCheck
    ) throws -> (check: FeedCheck, shared: Bool) {
        // Not registered (removed meanwhile): nothing to share on.
        guard let from = registry.checkFrom(ticket) else { return (try run(), false) }
        let (flight, leads) = state.withLock { state -> (Flight, Bool) in
            if let flight = state.flights[key], flight.startedAt >= from { return (flight, false) }
            // The epoch is read after the caller's own, so it is at least `from`.
            let flight = Flight(startedAt: registry.epoch)
            state.flights[key] = flight
            state.madeSinceSweep += 1
            if state.madeSinceSweep >= Self.sweepEvery { Self.sweep(&state) }
            return (flight, true)
        }
        guard leads else { return (try flight.answer().get(), true) }
        let result = Result { try run() }
        flight.finish(result)
        if case .failure = result {
            // A failure answers those already waiting on it, never a later waiter.
            state.withLock { state in
                if state.flights[key] === flight { state.flights[key] = nil }
            }
        }
        return (try result.get(), false)
    }

    private static func sweep(_ state: inout State) {
        let now = MonotonicClock.now()
        state.flights = state.flights.filter { !$0.value.isDone || now - $0.value.madeAt < keepSeconds }
        state.madeSinceSweep = 0
    }
}
