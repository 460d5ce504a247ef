import Ferry
import FerryHTTP
import Logging
import Synchronization

/// Process-wide logging, set up once from `logging.*`, on standard output.
///
/// `text` lines go through a `LogBuffer` that a background thread flushes, so
/// the per-request line costs a memory append on the hot path, not a write
/// system call. `json` lines (one object per line) are written whole, one
/// write(2) each: `LogBuffer`'s append is not public to this module yet.
enum LogSetup {
    private static let buffer = Mutex<LogBuffer?>(nil)

    static func bootstrap(_ config: FerryConfiguration.Logging) {
        let level = Logger.Level(rawValue: config.level) ?? .info
        if config.format == "json" {
            let writer = LogLineWriter()
            LoggingSystem.bootstrap { label in
                JSONLogHandler(label: label, logLevel: level) { writer.write($0) }
            }
            return
        }
        let logBuffer = LogBuffer()
        buffer.withLock { $0 = logBuffer }
        LoggingSystem.bootstrap { label in
            BufferedLogHandler(label: label, buffer: logBuffer, logLevel: level)
        }
    }

    /// Writes out what is buffered; call before the process exits.
    static func flush() {
        buffer.withLock { $0?.close() }
    }
}
