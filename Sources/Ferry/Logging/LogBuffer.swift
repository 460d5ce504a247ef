import Dispatch
import FerryHTTP
import Foundation
import Glibc
import FerryBase
import Synchronization

/// An in-memory byte buffer for log lines, written to a file descriptor by a
/// background timer every `flushInterval` or as soon as `flushBytes` gather,
/// so that logging a request costs a memcpy, not a write(2).
///
/// Call `flush()` (or `close()`) before the process exits.
public final class LogBuffer: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var flushScheduled = false
        var dropped = 0
    }

    private let fd: Int32
    private let flushBytes: Int
    private let maxBytes: Int
    private let state = Locked(State())
    /// Serializes writes so lines never interleave or reorder.
    private let writeLock = Locked(())
    /// Wakes the flusher thread early when `flushBytes` have gathered.
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    /// A buffer writing to `fd` (default stdout). When more than `maxBytes`
    /// are waiting (the reader is stuck), new lines are dropped and counted.
    public init(fd: Int32 = STDOUT_FILENO, flushInterval: Double = 0.1, flushBytes: Int = 64 * 1024, maxBytes: Int = 8 * 1024 * 1024) {
        self.fd = fd
        self.flushBytes = flushBytes
        self.maxBytes = maxBytes
        let flusher = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + flushInterval)
                writeOut()
            }
        }
        flusher.name = "ferry-log"
        flusher.start()
    }

    /// Appends one formatted line (with its newline): the text handler's lines and
    /// Ferry's JSON ones go through the same buffer.
    public func append(_ line: [UInt8]) {
        line.withUnsafeBytes { append($0) }
    }

    /// Appends one formatted line (with its newline) from bytes the caller keeps.
    public func append(_ line: UnsafeRawBufferPointer) {
        let wake = state.withLock { state -> Bool in
            guard state.bytes.count + line.count <= maxBytes else {
                state.dropped += 1
                return false
            }
            // As typed bytes: Array copies an UnsafeBufferPointer whole, a raw one byte by byte.
            line.withMemoryRebound(to: UInt8.self) { state.bytes.append(contentsOf: $0) }
            guard state.bytes.count >= flushBytes, !state.flushScheduled else { return false }
            state.flushScheduled = true
            return true
        }
        if wake { self.wake.signal() }
    }

    /// Writes everything buffered so far and returns once it is written.
    public func flush() {
        writeOut()
    }

    /// Flushes and stops the flusher thread; later lines wait for `flush()`.
    public func close() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        flush()
    }

    private func writeOut() {
        writeLock.withLock { _ in writeOutLocked() }
    }

    private func writeOutLocked() {
        let (bytes, dropped) = state.withLock { state in
            let out = (state.bytes, state.dropped)
            state.bytes = []
            state.bytes.reserveCapacity(out.0.count)
            state.dropped = 0
            state.flushScheduled = false
            return out
        }
        var all = bytes
        if dropped > 0 { all.append(contentsOf: "log buffer full: dropped \(dropped) lines\n".utf8) }
        var offset = 0
        all.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
