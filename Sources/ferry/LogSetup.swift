import Ferry
import Logging

/// Process-wide logging, set up once from `logging.*`.
enum LogSetup {
    static func bootstrap(_ config: FerryConfiguration.Logging) {
        let level = Logger.Level(rawValue: config.level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    static func flush() {}
}
