import Dispatch
import FerryBase

/// A fixed set of `MemcachedHandle`s lent to one thread at a time.
///
/// Our own pool instead of libmemcachedutil's: its `memcached_pool_fetch` computes the
/// deadline from whole seconds (`time(NULL) + relative`), so a 100 ms wait may end at
/// once or after almost a second. Here the wait for a free handle is bounded by the
/// poll timeout, and a caller that cannot get one in time gets `.unavailable`.
final class MemcachedHandlePool: Sendable {
    private let idle: Locked<[MemcachedHandle]>
    private let free: DispatchSemaphore
    private let waitMs: Int
    private let size: Int

    init(size: Int, waitMs: Int, make: () throws(MemcachedError) -> MemcachedHandle) throws(MemcachedError) {
        var handles: [MemcachedHandle] = []
        for _ in 0..<size { handles.append(try make()) }
        self.idle = Locked(handles)
        self.free = DispatchSemaphore(value: size)
        self.waitMs = waitMs
        self.size = size
    }

    /// Runs `body` with a handle nobody else holds, and returns the handle afterwards.
    func withHandle<R>(_ body: (MemcachedHandle) throws(MemcachedError) -> R) throws(MemcachedError) -> R {
        guard free.wait(timeout: .now() + .milliseconds(waitMs)) == .success else {
            throw MemcachedError(
                kind: .unavailable,
                message: "all \(size) pooled connections stayed busy for \(waitMs) ms")
        }
        // The semaphore guarantees an idle handle exists.
        let handle = idle.withLock { $0.removeLast() }
        defer {
            idle.withLock { $0.append(handle) }
            free.signal()
        }
        return try body(handle)
    }
}
