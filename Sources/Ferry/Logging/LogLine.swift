import Glibc
import Logging

// Structured log lines: the ordered fields a line carries, the logger that
// takes them, and the text line written into a reused per-thread buffer.

/// A log line being formatted into raw bytes that the formatting thread reuses
/// (see ``LineScratch``): each append is a bounds check and a copy, where
/// appending to a `[UInt8]` went through Array's generic paths and the line cost
/// an allocation. Every request writes one line, so this is on the hot path.
struct LogLine {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    private(set) var count = 0

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The bytes written so far; valid until the next append.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    var last: UInt8? { count > 0 ? base[count - 1] : nil }

    mutating func removeLast() { count -= 1 }

    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        memcpy(base + count, source, bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        // A native String hands out its storage; a bridged or lazy one is copied first.
        if text.utf8.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) != nil { return }
        var copy = text
        copy.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Turns each control character written so far (C0 but tab, DEL, and C1, U+0080 to
    /// U+009F, whose CSI some terminals obey) into spaces, so that one event is one line
    /// of plain text: libpq's messages span lines ("server closed the connection
    /// unexpectedly\n\tThis probably means…"), a value with a line break in it could
    /// otherwise forge a line of its own, and one with an escape sequence could rewrite
    /// what an operator's terminal shows. A C1 character is two bytes (C2 80 to C2 9F),
    /// both made spaces, so the line stays valid UTF-8.
    mutating func flattenControlBytes() {
        var at = 0
        while at < count {
            let byte = base[at]
            if byte < 0x20 && byte != 0x09 || byte == 0x7F {
                base[at] = 0x20
            } else if byte == 0xC2, at + 1 < count, (0x80...0x9F).contains(base[at + 1]) {
                base[at] = 0x20
                base[at + 1] = 0x20
                at += 1
            }
            at += 1
        }
    }

    private mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let grown = max(capacity * 2, count + extra)
        // The storage is malloc's (LineScratch's), so it grows in place when it can.
        guard let moved = realloc(base, grown) else { fatalError("out of memory growing a log line to \(grown) bytes") }
        base = moved.assumingMemoryBound(to: UInt8.self)
        capacity = grown
    }
}

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

/// One key and value of a log line written from fields in a fixed order rather than
/// from swift-log's metadata dictionary (see ``FieldLogger``): the per-request line
/// goes this way, because building, hashing and sorting a dictionary for it cost more
/// than the rest of the line.
public struct LogField: Sendable {
    /// A field's value: the kinds the request line needs, each written without a
    /// `description` String in between.
    public enum Value: Sendable {
        /// Text, written as it is (JSON-escaped in JSON lines).
        case string(String)
        case int(Int)
        /// A count of thousandths, written as a decimal the way `Double.description`
        /// writes `Double(value) / 1000`: "1.25", "0.001", "12.0" (the same text for
        /// every count a Double holds exactly, up to 2^53: as microseconds, some 285 years).
        case thousandths(Int)
    }

    /// The key; its line writes it as given.
    public var key: String
    public var value: Value

    public init(_ key: String, _ value: Value) {
        self.key = key
        self.value = value
    }

    /// The same value as swift-log metadata, for handlers without the fields path;
    /// numbers stay numbers (`.stringConvertible`), as JSON handlers expect.
    public var metadataValue: Logger.MetadataValue {
        switch value {
        case .string(let text): .string(text)
        case .int(let number): .stringConvertible(number)
        case .thousandths(let count): .stringConvertible(Double(count) / 1000)
        }
    }

    /// Appends the value as text: a string's bytes, or the number's decimal digits.
    /// A number is also valid JSON as written.
    public func appendValueText(to line: inout [UInt8]) {
        withValueText { $0.withMemoryRebound(to: UInt8.self) { line.append(contentsOf: $0) } }
    }

    /// Appends the value as ``appendValueText(to:)-([UInt8])`` does.
    func appendValueText(to line: inout LogLine) {
        withValueText { line.append($0) }
    }

    /// Calls `body` with the value's text: a string's own UTF-8, or a number's
    /// digits formatted on the stack.
    private func withValueText<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch value {
        case .string(let text):
            if let result = text.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
            var copy = text
            return copy.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        case .int(let number):
            var digits = DigitsText()
            digits.prepend(number.magnitude)
            if number < 0 { digits.prepend(byte: 45) }
            return digits.withBytes(body)
        case .thousandths(let count):
            var digits = DigitsText()
            let magnitude = count.magnitude
            // Double.description drops trailing zeros but keeps one place: "1.25", "12.0".
            var fraction = magnitude % 1000
            var places = 3
            while places > 1, fraction % 10 == 0 {
                fraction /= 10
                places -= 1
            }
            for _ in 0..<places {
                digits.prepend(byte: UInt8(48 + fraction % 10))
                fraction /= 10
            }
            digits.prepend(byte: 46)
            digits.prepend(magnitude / 1000)
            if count < 0 { digits.prepend(byte: 45) }
            return digits.withBytes(body)
        }
    }
}

/// Up to 32 bytes of a number's text, written from the right: a UInt64's 20 digits,
/// a sign, a point and three places fit.
private struct DigitsText {
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var start = 32

    mutating func prepend(byte: UInt8) {
        start -= 1
        let at = start
        withUnsafeMutableBytes(of: &storage) { $0[at] = byte }
    }

    /// Prepends the decimal digits of `value` ("0" for zero).
    mutating func prepend(_ value: UInt) {
        var rest = value
        repeat {
            prepend(byte: UInt8(48 + rest % 10))
            rest /= 10
        } while rest > 0
    }

    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(of: storage) { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }
}

/// One reusable line buffer per thread to format log lines into, so that a line
/// costs no allocation: every request writes one, on whichever worker thread
/// answered it.
enum LineScratch {
    /// A class, so the thread-specific slot can keep it; it owns the malloc'd bytes.
    private final class Box {
        var base: UnsafeMutablePointer<UInt8>
        var capacity = 1_024
        var inUse = false
        init() { base = malloc(capacity)!.assumingMemoryBound(to: UInt8.self) }
        deinit { free(base) }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // The slot holds a retained Box; the thread's exit releases it.
        pthread_key_create(&key) { raw in
            guard let raw else { return }
            Unmanaged<Box>.fromOpaque(raw).release()
        }
        return key
    }()

    /// Runs `body` with an empty line over this thread's buffer. A nested call on the
    /// same thread, which no formatter makes today, gets a buffer of its own rather
    /// than a second hold on the first.
    static func with<R>(_ body: (inout LogLine) -> R) -> R {
        let box: Box
        if let raw = pthread_getspecific(key) {
            box = Unmanaged<Box>.fromOpaque(raw).takeUnretainedValue()
        } else {
            box = Box()
            pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        }
        guard !box.inUse else {
            let own = Box()
            var line = LogLine(base: own.base, capacity: own.capacity)
            defer { own.base = line.base }
            return body(&line)
        }
        box.inUse = true
        var line = LogLine(base: box.base, capacity: box.capacity)
        // The line may have moved its bytes while growing: the box owns them either way.
        defer {
            box.base = line.base
            box.capacity = line.capacity
            box.inUse = false
        }
        return body(&line)
    }
}
