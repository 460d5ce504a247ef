import Logging

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
        /// A whole number.
        case int(Int)
        /// A count of thousandths, written as a decimal the way `Double.description`
        /// writes `Double(value) / 1000`: "1.25", "0.001", "12.0" (the same text for
        /// every count a Double holds exactly, up to 2^53: as microseconds, some 285 years).
        case thousandths(Int)
    }

    /// The key; its line writes it as given.
    public var key: String
    /// The value.
    public var value: Value

    /// A field `key` with `value`.
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
