#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable guarding a value, for blocking waits with a deadline.
///
/// `Synchronization.Mutex` has no condition variable, and the pool needs waiters that sleep
/// until a connection is returned or their deadline passes. The condition uses the monotonic
/// clock so wall-clock jumps cannot stretch or cut an acquire timeout.
///
/// `@unchecked Sendable` is safe because `state` is only read or written inside `withLock`,
/// i.e. while holding `mutex`, and the pthread objects live at stable heap addresses.
final class ConditionLock<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// How a `withLockWaiting` body was entered.
    enum Wake {
        /// The first call.
        case first
        /// After a signal (or a spurious wake-up).
        case signalled
        /// After the deadline passed.
        case timedOut
    }

    /// Runs `body` under the lock until it returns a value; while it returns nil,
    /// sleeps until signalled or until `deadline`, then calls it again.
    ///
    /// The sleep happens between two calls of `body`, never inside one: an
    /// `inout` access to the state must not stay open while the mutex is
    /// released, or the optimiser may keep values from before the sleep that
    /// other threads changed meanwhile.
    func withLockWaiting<R, E: Error>(
        until deadline: Deadline, _ body: (inout State, Wake) throws(E) -> R?
    ) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var wake = Wake.first
        while true {
            if let result = try body(&state, wake) { return result }
            var time = deadline.time
            wake = pthread_cond_timedwait(condition, mutex, &time) == ETIMEDOUT ? .timedOut : .signalled
        }
    }

    /// Wakes one thread blocked in `withLockWaiting`.
    func signal() { pthread_cond_signal(condition) }

    /// Wakes every thread blocked in `withLockWaiting`.
    func broadcast() { pthread_cond_broadcast(condition) }

    /// The monotonic time `duration` from now, for `withLockWaiting(until:_:)`.
    static func deadline(after duration: Duration) -> Deadline {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = duration.components
        var nanoseconds = Int64(now.tv_nsec) + attoseconds / 1_000_000_000
        var wholeSeconds = Int64(now.tv_sec) + seconds
        wholeSeconds += nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        return Deadline(time: timespec(tv_sec: Int(wholeSeconds), tv_nsec: Int(nanoseconds)))
    }
}

/// A point on the monotonic clock, as `pthread_cond_timedwait` wants it.
struct Deadline {
    fileprivate let time: timespec
}
