import Glibc

/// One reusable line buffer per thread to format log lines into, so that a line
/// costs no allocation: every request writes one, on whichever worker thread
/// answered it.
enum LineScratch {
    /// A class, so the thread-specific slot can keep it; it owns the malloc'd bytes.
    private final class Box {
        var base: UnsafeMutablePointer<UInt8>
        var capacity = 1_024
        var inUse = false
        init() { base = malloc(capacity)!.assumingMemoryBound(to: UInt8.self) }
        deinit { free(base) }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // The slot holds a retained Box; the thread's exit releases it.
        pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<Box>.fromOpaque(raw).release()
        }
        return key
    }()

    /// Runs `body` with an empty line over this thread's buffer. A nested call on the
    /// same thread, which no formatter makes today, gets a buffer of its own rather
    /// than a second hold on the first.
    static func with<R>(_ body: (inout LogLine) -> R) -> R {
        let box: Box
        if let raw = pthread_getspecific(key) {
            box = Unmanaged<Box>.fromOpaque(raw).takeUnretainedValue()
        } else {
            box = Box()
            pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        }
        guard !box.inUse else {
            let own = Box()
            var line = LogLine(base: own.base, capacity: own.capacity)
            defer { own.base = line.base }
            return body(&line)
        }
        box.inUse = true
        var line = LogLine(base: box.base, capacity: box.capacity)
        // The line may have moved its bytes while growing: the box owns them either way.
        defer {
            box.base = line.base
            box.capacity = line.capacity
            box.inUse = false
        }
        return body(&line)
    }
}
