import FerryHTTP
import Logging

/// A swift-log handler writing one JSON object per line (`logging.format: json`):
/// `{"ts":"2026-01-31T12:00:00.123Z","level":"info","logger":"ferry","message":"request","request_id":"…",…}`.
///
/// Metadata keys become top-level members, so log pipelines can index
/// `request_id`, `user_id` and `route` directly. A metadata key that would
/// shadow `ts`, `level`, `logger` or `message` is written as `meta.<key>`.
public struct JSONLogHandler: FieldLogHandler {
    /// Where finished lines (each ending in a newline) go.
    public typealias Sink = @Sendable ([UInt8]) -> Void

    /// Handler-wide metadata.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    public var logLevel: Logger.Level
    private let label: String
    private let sink: Sink

    /// A handler for `label` passing each line to `sink`.
    public init(label: String, logLevel: Logger.Level = .info, sink: @escaping Sink) {
        self.label = label
        self.logLevel = logLevel
        self.sink = sink
    }

    /// Renders the event and its metadata as one JSON line, written straight into
    /// one byte array (every request logs a line; building a JSONValue tree first, with
    /// a String timestamp, was a large share of a GET's cost).
    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        write(event.level, event.message.description, merged)
    }

    /// Writes the line `log(event:)` writes for `fields` as metadata. Keys come in
    /// the order given (callers pass them sorted); with handler-wide metadata, which
    /// would have to be sorted in among them, the fields go the metadata way.
    public func log(level: Logger.Level, message: String, fields: [LogField]) {
        guard metadata.isEmpty else {
            var merged = metadata
            for field in fields { merged[field.key] = field.metadataValue }
            write(level, message, merged)
            return
        }
        var line = header(level, message)
        for field in fields {
            appendKey(field.key, to: &line)
            if case .string(let text) = field.value {
                JSONValue.writeString(text, into: &line)
            } else {
                field.appendValueText(to: &line)
            }
        }
        finish(&line)
    }

    private func write(_ level: Logger.Level, _ message: String, _ merged: Logger.Metadata) {
        var line = header(level, message)
        for key in merged.keys.sorted() {
            appendKey(key, to: &line)
            Self.json(merged[key]!).write(into: &line)
        }
        finish(&line)
    }

    /// Closes the object, ends the line and hands it to the sink.
    private func finish(_ line: inout [UInt8]) {
        line.append(UInt8(ascii: "}"))
        line.append(10)
        sink(line)
    }

    /// The object up to its message member, the object left open.
    private func header(_ level: Logger.Level, _ message: String) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(320)
        line.append(contentsOf: #"{"ts":""#.utf8)
        BufferedLogHandler.appendTimestamp(to: &line)
        line.append(contentsOf: #"","level":"#.utf8)
        JSONValue.writeString(level.rawValue, into: &line)
        line.append(contentsOf: #","logger":"#.utf8)
        JSONValue.writeString(label, into: &line)
        line.append(contentsOf: #","message":"#.utf8)
        JSONValue.writeString(message, into: &line)
        return line
    }

    /// `,"key":`, with a key that would shadow a member of the line's own renamed `meta.<key>`.
    private func appendKey(_ key: String, to line: inout [UInt8]) {
        line.append(UInt8(ascii: ","))
        JSONValue.writeString(Self.isReserved(key) ? "meta." + key : key, into: &line)
        line.append(UInt8(ascii: ":"))
    }

    static func isReserved(_ key: String) -> Bool {
        switch key {
        case "ts", "level", "logger", "message": true
        default: false
        }
    }

    /// Numbers and booleans logged as `.stringConvertible` stay JSON numbers and booleans.
    static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let string): return .string(string)
        case .stringConvertible(let convertible):
            if let int = convertible as? Int { return .int(int) }
            if let bool = convertible as? Bool { return .bool(bool) }
            if let double = convertible as? Double, double.isFinite { return .double(double) }
            return .string(convertible.description)
        case .array(let items): return .array(items.map(json))
        case .dictionary(let dictionary):
            return .object(dictionary.keys.sorted().map { ($0, json(dictionary[$0]!)) })
        }
    }
}
