import Logging
import Synchronization

/// A log handler for tests that keeps every event it is given (message and metadata), for
/// a test to read back; it has no fields path, so fields arrive as metadata.
struct RecordingLogHandler: LogHandler {
    /// The events, shared by every copy of the handler.
    final class Events: Sendable {
        let events = Mutex<[(String, Logger.Metadata)]>([])
        /// The messages alone, in order.
        var messages: [String] { events.withLock { $0.map(\.0) } }
    }
    let events: Events
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        events.events.withLock { $0.append((event.message.description, event.metadata ?? [:])) }
    }
}
