import Glibc

/// A value behind a plain pthread mutex, for locks that every request takes.
///
/// `Synchronization.Mutex` spins in user space before it sleeps. Ferry runs
/// dozens of worker threads on a couple of cores, so a lock holder is often
/// descheduled, and the spinning waiters then burned the CPU the holder
/// needed: with the log buffer and the worker queue on `Mutex`, a large share
/// of the server's CPU under load went to `_MutexHandle._lockSlow` (see
/// bench/README.md). glibc's default mutex sleeps at once instead.
///
/// Sendable (unchecked) when the value is: the compiler cannot see that
/// `value` is only touched inside `withLock`, under `mutex`; the mutex lives at
/// a stable heap address, as pthread requires.
public final class LockedValue<Value> {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    /// A lock around `value`.
    public init(_ value: Value) {
        self.value = value
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// `body`'s result, computed with exclusive access to the value.
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension LockedValue: @unchecked Sendable where Value: Sendable {}
