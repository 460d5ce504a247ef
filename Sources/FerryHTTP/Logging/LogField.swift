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
        switch value {
        case .string(var text): text.withUTF8 { line.append(contentsOf: $0) }
        case .int(let number): Self.appendInteger(number, to: &line)
        case .thousandths(let count):
            if count < 0 { line.append(45) }
            let magnitude = count.magnitude
            Self.appendInteger(Int(magnitude / 1000), to: &line)
            let fraction = Int(magnitude % 1000)
            line.append(contentsOf: [46, UInt8(48 + fraction / 100), UInt8(48 + fraction / 10 % 10), UInt8(48 + fraction % 10)])
            // Double.description drops trailing zeros but keeps one place: "1.25", "12.0".
            for _ in 0..<2 where line.last == 48 { line.removeLast() }
        }
    }

    private static func appendInteger(_ value: Int, to line: inout [UInt8]) {
        guard value < 0 else { return ResponseSerializer.appendDecimal(value, to: &line) }
        // Int.min has no positive twin; it is never a request's figure, so its description will do.
        guard value != .min else { return line.append(contentsOf: value.description.utf8) }
        line.append(45)
        ResponseSerializer.appendDecimal(-value, to: &line)
    }
}
