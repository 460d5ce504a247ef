import Logging

/// A log handler that can also write a line from fields already in order, with no
/// metadata dictionary. ``BufferedLogHandler`` is one; Ferry's JSON handler is another.
///
/// The line must read as `log(event:)` would write it for the same fields as
/// metadata, handler-wide metadata included, so the two paths are interchangeable.
public protocol FieldLogHandler: LogHandler {
    /// Writes `message` with `fields` at `level`; the caller has checked `logLevel`.
    func log(level: Logger.Level, message: String, fields: [LogField])
}

extension FieldLogHandler {
    /// One handler-wide metadata value, kept in `metadata`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
}

/// A `Logger` for lines written from ordered fields: straight through the handler
/// when it is a ``FieldLogHandler`` (found once, here, not per line), otherwise as
/// ordinary metadata, so any handler still gets every line.
public struct FieldLogger: Sendable {
    /// The logger lines go to.
    public let logger: Logger
    private let direct: (any FieldLogHandler)?
    /// The logger's level, read once: asking the handler is a call through an
    /// existential per line, and this wrapper's copy of the logger cannot change.
    private let lowest: Logger.Level

    /// Wraps `logger`.
    public init(_ logger: Logger) {
        self.logger = logger
        direct = logger.handler as? any FieldLogHandler
        lowest = logger.logLevel
    }

    /// Whether a line at `level` would be written; check it before building fields.
    public func isEnabled(_ level: Logger.Level) -> Bool { lowest <= level }

    /// Writes `message` with `fields`, in the order given (callers pass keys sorted,
    /// as the handlers sort metadata), when `level` is enabled.
    public func log(level: Logger.Level, _ message: String, fields: [LogField]) {
        guard isEnabled(level) else { return }
        if let direct {
            direct.log(level: level, message: message, fields: fields)
            return
        }
        var metadata = Logger.Metadata(minimumCapacity: fields.count)
        for field in fields { metadata[field.key] = field.metadataValue }
        logger.log(level: level, "\(message)", metadata: metadata)
    }
}
