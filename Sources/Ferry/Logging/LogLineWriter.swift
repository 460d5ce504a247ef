import FerryHTTP
import Glibc

/// Writes whole log lines to a file descriptor, one write(2) per line under a
/// lock, so lines from many threads never interleave.
public final class LogLineWriter: Sendable {
    private let fd: Int32
    /// Held across a write(2): a sleeping lock, not a spinning `Mutex`.
    private let lock = LockedValue(())

    /// A writer to `fd` (default standard output, where the text logs go too).
    public init(fd: Int32 = STDOUT_FILENO) { self.fd = fd }

    /// Writes `line`; a short write is retried, a failed one dropped (logging must not fail requests).
    public func write(_ line: [UInt8]) {
        lock.withLock { _ in
            line.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { return }
                }
            }
        }
    }
}
