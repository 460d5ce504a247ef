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
public struct BufferedLogHandler: LogHandler {
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
        var line: [UInt8] = []
        line.reserveCapacity(160)
        Self.appendTimestamp(to: &line)
        line.append(32)
        line.append(contentsOf: event.level.rawValue.utf8)
        line.append(32)
        line.append(contentsOf: label.utf8)
        line.append(contentsOf: ": ".utf8)
        line.append(contentsOf: event.message.description.utf8)
        appendMetadata(metadata, to: &line)
        if let extra = event.metadata { appendMetadata(extra, to: &line) }
        line.append(10)
        buffer.append(line)
    }

    private func appendMetadata(_ metadata: Logger.Metadata, to line: inout [UInt8]) {
        guard !metadata.isEmpty else { return }
        // Every request logs a line: no string interpolation for the common value kinds.
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line.append(32)
            line.append(contentsOf: key.utf8)
            line.append(61)
            switch value {
            case .string(let text): line.append(contentsOf: text.utf8)
            case .stringConvertible(let convertible): line.append(contentsOf: convertible.description.utf8)
            default: line.append(contentsOf: value.description.utf8)
            }
        }
    }

    /// ISO 8601 UTC with milliseconds.
    static func appendTimestamp(to line: inout [UInt8]) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        var seconds = ts.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var v = value
            while divisor > 0 {
                line.append(UInt8(48 + (v / divisor) % 10))
                v %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); line.append(45)
        digits(Int(parts.tm_mon) + 1, 2); line.append(45)
        digits(Int(parts.tm_mday), 2); line.append(84)
        digits(Int(parts.tm_hour), 2); line.append(58)
        digits(Int(parts.tm_min), 2); line.append(58)
        digits(Int(parts.tm_sec), 2); line.append(46)
        digits(Int(ts.tv_nsec / 1_000_000), 3); line.append(90)
    }
}
