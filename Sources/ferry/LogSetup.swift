import Ferry
import Logging

/// Process-wide logging, set up once from `logging.*`: `text` lines from
/// swift-log's stream handler, or `json`, one object per line.
enum LogSetup {
    static func bootstrap(_ config: FerryConfiguration.Logging) {
        let level = Logger.Level(rawValue: config.level) ?? .info
        if config.format == "json" {
            let writer = LogLineWriter()
            LoggingSystem.bootstrap { label in
                JSONLogHandler(label: label, logLevel: level) { writer.write($0) }
            }
            return
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    static func flush() {}
}
