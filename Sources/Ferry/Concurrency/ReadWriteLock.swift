import Glibc

/// A value behind a reader-writer lock: any number of readers at once, one writer.
///
/// For state every request reads and almost nothing writes (the schema catalog,
/// the plan cache). With dozens of worker threads on a couple of cores, a
/// `Mutex` there was held by a descheduled thread often enough that the others
/// spent a noticeable share of Ferry's CPU spinning in `lockSlow`; readers of an rwlock
/// never wait for each other, only for a writer.
///
/// `@unchecked Sendable` because the compiler cannot see that every access to
/// `value` happens under `lock`; `read` and `write` are the only ways in.
final class ReadWriteLock<Value: Sendable>: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    private var value: Value

    /// A lock around `value`.
    init(_ value: Value) {
        self.value = value
        // glibc's default kind prefers readers, which suits read-mostly state.
        precondition(pthread_rwlock_init(lock, nil) == 0, "pthread_rwlock_init failed")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// `body`'s result, computed while holding the lock for reading.
    func read<T>(_ body: (Value) throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// `body`'s result, computed while holding the lock exclusively.
    func write<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
