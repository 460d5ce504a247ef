import Dispatch
import Foundation
import Synchronization

/// Runs blocking work on a thread of its own, so that waiting on PostgreSQL does not hold
/// one of the few threads of Swift's cooperative pool.
public func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Starts blocking work on a thread of its own and returns at once; the
/// result's `wait()` blocks the caller (see `ThreadResult`).
public func startThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
    let result = ThreadResult<T>()
    Thread { result.finish(body()) }.start()
    return result
}

/// The value a thread produces; `wait()` blocks until it is there.
///
/// Blocking rather than `async` on purpose: an async test resumes on Swift's
/// small cooperative pool (two threads here), which long synchronous tests in
/// other suites can starve for tens of seconds, and a test's timing assertions
/// would then measure that starvation instead of the code under test.
public final class ThreadResult<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    private let done = DispatchSemaphore(value: 0)

    public init() {}

    public func finish(_ result: T) {
        value.withLock { $0 = result }
        done.signal()
    }

    public func wait() -> T {
        done.wait()
        return value.withLock { $0! }
    }
}

/// A flag one thread raises and another polls.
public final class Flag: Sendable {
    private let value = Atomic(false)
    public init() {}
    public func raise() { value.store(true, ordering: .releasing) }
    public var isRaised: Bool { value.load(ordering: .acquiring) }
}
