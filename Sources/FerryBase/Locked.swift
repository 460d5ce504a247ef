#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a pthread mutex, with a condition variable for blocking
/// waits: the one lock type of the server's modules.
///
/// Why not `Synchronization.Mutex`: it spins in user space before it sleeps.
/// The server runs dozens of worker threads on a couple of cores, so a lock
/// holder is often descheduled, and spinning waiters then burn the CPU the
/// holder needs (bench/api/README.md, "Spinning locks"). glibc's default mutex sleeps at
/// once. Why not a reader-writer lock for read-mostly state: the sections it
/// guards copy a reference or look up a dictionary, far shorter than the
/// futex sleep a reader would avoid, and one kind of lock is one rule to
/// reason about.
///
/// The condition variable uses the monotonic clock, so a wall-clock jump can
/// neither stretch nor cut a wait's deadline.
///
/// `@unchecked Sendable`, whatever the value, as `Synchronization.Mutex` is:
/// the compiler cannot see that `value` is only touched inside
/// `withLock`/`withLockWaiting`, under `mutex`, and the pthread objects live at
/// stable heap addresses, as pthread requires. A non-Sendable value (the
/// PostgreSQL pool's idle connections) is safe behind it as long as no body
/// lets a reference to it escape while another thread may use it; each such
/// use says how it keeps to that.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Only touched under `mutex`, which already makes each access exclusive: the
    // runtime's own exclusivity check on every access cost a noticeable share of
    // a request whose locks are taken several times.
    @exclusivity(unchecked) private var value: Value

    public init(_ value: Value) {
        self.value = value
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// `body`'s result, computed with exclusive access to the value.
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// How a `withLockWaiting` body was entered.
    public enum Wake: Sendable {
        /// The first call.
        case first
        /// After a signal (or a spurious wake-up).
        case signalled
        /// After the deadline passed.
        case timedOut
    }

    /// Runs `body` under the lock until it returns a value; while it returns
    /// nil, sleeps until signalled or until `deadline`, then calls it again.
    ///
    /// The sleep happens between two calls of `body`, never inside one: an
    /// `inout` access must not stay open while the mutex is released, or the
    /// optimiser may keep values from before the sleep that other threads
    /// changed meanwhile.
    public func withLockWaiting<T, E: Error>(
        until deadline: LockDeadline, _ body: (inout Value, Wake) throws(E) -> T?
    ) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var wake = Wake.first
        while true {
            if let result = try body(&value, wake) { return result }
            var time = deadline.time
            wake = pthread_cond_timedwait(condition, mutex, &time) == ETIMEDOUT ? .timedOut : .signalled
        }
    }

    /// Wakes one thread blocked in `withLockWaiting`.
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every thread blocked in `withLockWaiting`.
    public func broadcast() { pthread_cond_broadcast(condition) }
}

/// A point on the monotonic clock (the wall clock on Darwin, whose condition
/// variables have no clock attribute), as `pthread_cond_timedwait` wants it.
public struct LockDeadline: Sendable {
    fileprivate let time: timespec

    /// The deadline `duration` from now.
    public init(after duration: Duration) {
        var now = timespec()
        #if canImport(Glibc)
        clock_gettime(CLOCK_MONOTONIC, &now)
        #else
        clock_gettime(CLOCK_REALTIME, &now)
        #endif
        let (seconds, attoseconds) = duration.components
        var nanoseconds = Int64(now.tv_nsec) + attoseconds / 1_000_000_000
        var wholeSeconds = Int64(now.tv_sec) + seconds
        wholeSeconds += nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        time = timespec(tv_sec: Int(wholeSeconds), tv_nsec: Int(nanoseconds))
    }
}
