import Foundation

/// A value behind an `NSLock`, for FerryKit's tests: what they share between
/// tasks and threads.
///
/// Why not `Synchronization.Mutex`: on Linux, a contended `Mutex` is handed over
/// by the kernel (a priority-inheriting futex, in the standard library's
/// uninstrumented slow path), so ThreadSanitizer sees no order between its
/// holders and reports a race on the value it guards (.ci/tsan.sh). An
/// `NSLock` is a pthread mutex, which ThreadSanitizer follows.
///
/// `@unchecked Sendable`, as `Mutex` is: `value` is only touched under `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// `body`'s result, computed with exclusive access to the value.
    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
