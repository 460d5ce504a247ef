import Glibc
import Logging

/// A swift-log handler that formats lines into a `LogBuffer` instead of
/// writing each one, so that the access log does not dominate request cost.
///
/// ```swift
/// let buffer = LogBuffer()
/// LoggingSystem.bootstrap { BufferedLogHandler(label: $0, buffer: buffer) }
/// defer { buffer.close() }
/// ```
/// Lines look like `2025-01-31T12:00:00.123Z info ferry: message key=value`.
public struct BufferedLogHandler: FieldLogHandler {
    /// Handler-wide metadata, printed after the message.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    public var logLevel: Logger.Level
    private let label: String
    private let buffer: LogBuffer

    /// A handler for `label` writing into `buffer`.
    public init(label: String, buffer: LogBuffer, logLevel: Logger.Level = .info) {
        self.label = label
        self.buffer = buffer
        self.logLevel = logLevel
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = header(event.level, event.message.description)
        appendMetadata(metadata, to: &line)
        if let extra = event.metadata { appendMetadata(extra, to: &line) }
        line.append(10)
        buffer.append(line)
    }

    /// Writes the line `log(event:)` writes for `fields` as metadata, keys in the order given.
    public func log(level: Logger.Level, message: String, fields: [LogField]) {
        var line = header(level, message)
        appendMetadata(metadata, to: &line)
        for field in fields {
            line.append(32)
            Self.append(field.key, to: &line)
            line.append(61)
            field.appendValueText(to: &line)
        }
        line.append(10)
        buffer.append(line)
    }

    /// The line up to its message: timestamp, level, label and message.
    private func header(_ level: Logger.Level, _ message: String) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(192)
        Self.appendTimestamp(to: &line)
        line.append(32)
        line.append(contentsOf: level.rawValue.utf8)
        line.append(32)
        Self.append(label, to: &line)
        line.append(contentsOf: ": ".utf8)
        Self.append(message, to: &line)
        return line
    }

    private func appendMetadata(_ metadata: Logger.Metadata, to line: inout [UInt8]) {
        guard !metadata.isEmpty else { return }
        // Every request logs a line. Keys are sorted so lines always read the same
        // way; sorting the dictionary's indices moves no values, and each text is
        // copied as a whole (appending a String's UTF-8 view went byte by byte).
        let order = metadata.indices.sorted { metadata[$0].key < metadata[$1].key }
        for index in order {
            let (key, value) = metadata[index]
            line.append(32)
            Self.append(key, to: &line)
            line.append(61)
            switch value {
            case .string(let text): Self.append(text, to: &line)
            case .stringConvertible(let convertible): Self.append(convertible.description, to: &line)
            default: Self.append(value.description, to: &line)
            }
        }
    }

    private static func append(_ text: String, to line: inout [UInt8]) {
        var text = text
        text.withUTF8 { line.append(contentsOf: $0) }
    }

    /// Appends the wall-clock time as ISO 8601 UTC with milliseconds
    /// (`2026-01-31T12:00:00.123Z`), without allocating; Ferry's JSON handler uses it too.
    public static func appendTimestamp(to line: inout [UInt8]) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        var seconds = ts.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Two digits at a time: this runs for every request's line.
        func two(_ value: Int32) {
            line.append(UInt8(48 + value / 10))
            line.append(UInt8(48 + value % 10))
        }
        let year = parts.tm_year + 1900
        let milliseconds = Int32(ts.tv_nsec / 1_000_000)
        two(year / 100); two(year % 100); line.append(45)
        two(parts.tm_mon + 1); line.append(45)
        two(parts.tm_mday); line.append(84)
        two(parts.tm_hour); line.append(58)
        two(parts.tm_min); line.append(58)
        two(parts.tm_sec); line.append(46)
        line.append(UInt8(48 + milliseconds / 100)); two(milliseconds % 100); line.append(90)
    }
}
