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
            let magnitude = count.magnitude
            if count < 0 { line.append(45) }
            Self.appendInteger(Int(magnitude / 1000), to: &line)
            line.append(46)
            var fraction = Int(magnitude % 1000)
            // Double.description keeps one place for a whole number and drops trailing zeros.
            var places = 3
            while places > 1, fraction % 10 == 0 {
                fraction /= 10
                places -= 1
            }
            var divisor = places == 3 ? 100 : places == 2 ? 10 : 1
            while divisor > 1, fraction < divisor {
                line.append(48)
                divisor /= 10
            }
            Self.appendInteger(fraction, to: &line)
        }
    }

    private static func appendInteger(_ value: Int, to line: inout [UInt8]) {
        if value < 0 {
            line.append(45)
            // Int.min has no positive twin; its magnitude still fits a UInt.
            appendDigits(value.magnitude, to: &line)
        } else {
            appendDigits(UInt(value), to: &line)
        }
    }

    private static func appendDigits(_ value: UInt, to line: inout [UInt8]) {
        if value < 10 {
            line.append(UInt8(48 + value))
            return
        }
        appendDigits(value / 10, to: &line)
        line.append(UInt8(48 + value % 10))
    }
}
