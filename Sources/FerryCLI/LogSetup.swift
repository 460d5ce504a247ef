import Ferry
import Logging
import FerryBase

/// Process-wide logging, set up once from `logging.*`, on standard output.
///
/// Both formats' lines go through a `LogBuffer` that a background thread
/// flushes, so the per-request line costs a memory append on the hot path,
/// not a write system call (a write(2) per JSON line meant a system call on every request).
enum LogSetup {
    private static let buffer = Locked<LogBuffer?>(nil)

    static func bootstrap(_ config: FerryConfiguration.Logging) {
        let level = Logger.Level(rawValue: config.level) ?? .info
        let logBuffer = LogBuffer()
        buffer.withLock { $0 = logBuffer }
        if config.format == "json" {
            LoggingSystem.bootstrap { label in
                JSONLogHandler(label: label, logLevel: level) { logBuffer.append($0) }
            }
            return
        }
        LoggingSystem.bootstrap { label in
            BufferedLogHandler(label: label, buffer: logBuffer, logLevel: level)
        }
    }

    /// Writes out what is buffered; call before the process exits.
    static func flush() {
        buffer.withLock { $0?.close() }
    }
}
