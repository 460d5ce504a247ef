import Dispatch
import FerryBase
import FerryHTTP

/// One check of the feed, running or done, that other waiters may take
/// (on a ``CheckShelf``: ``SharedChecks``, ``StreamChecks``,
/// ``DefaultChecks``): the epoch it started at, decides who may; its answer,
/// once there, is waited for (the leader's query is in flight: a few ms). A
/// shelf also runs its bulk token lookups as `CheckFlight<Void>`: their
/// answer is only that they are done.
final class CheckFlight<Answer: Sendable>: Sendable {
    /// The registry's epoch read before the check began.
    let startedAt: UInt64
    /// The xid of the cursor it read from (``StreamChecks``; 0 where unused).
    let since: UInt64
    /// When it was made, to forget it a while after.
    let madeAt = MonotonicClock.now()
    private let outcome = Locked<Result<Answer, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(startedAt: UInt64, since: UInt64 = 0) {
        self.startedAt = startedAt
        self.since = since
    }

    var isDone: Bool { outcome.withLock { $0 != nil } }

    func finish(_ result: Result<Answer, any Error>) {
        outcome.withLock { $0 = result }
        done.signal()
    }

    /// Its answer, once there.
    func answer() -> Result<Answer, any Error> {
        done.wait()
        done.signal()
        return outcome.withLock { $0! }
    }
}
