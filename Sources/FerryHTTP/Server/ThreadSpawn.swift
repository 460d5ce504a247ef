import CEpoll
import Glibc

/// Starts a detached POSIX thread running `body`.
enum ThreadSpawn {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        // Linux limits thread names to 15 bytes.
        _ = pthread_setname_np(thread, String(name.prefix(15)))
        pthread_detach(thread)
    }
}
