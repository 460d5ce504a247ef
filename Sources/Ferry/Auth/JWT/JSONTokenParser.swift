/// Reads the JSON of a JWT's header or payload into a ``JSONConfigValue``
/// without throwing on the way (issue 51).
///
/// `JSONDecoder` can only learn a value's JSON type by trying each type in
/// turn (`JSONConfigValue.init(from:)`), and every wrong guess throws a
/// `DecodingError`: three to five per claim. Every request with a token not
/// yet verified pays that, and a flood of made-up tokens is such requests; a
/// profile of one showed a third of the workers' CPU in those throws (under
/// Swift Testing, which records a backtrace for each). This parser looks at
/// the next byte instead, and fails once, with nil, for text that is not JSON.
///
/// Strict RFC 8259, as the decoder was: one value with optional whitespace
/// around it, no trailing commas, no comments, no control characters or
/// lone surrogates in strings, valid UTF-8, finite numbers. Numbers read as
/// the decoder read them into ``JSONConfigValue``: an integer when the value
/// is one that `Int` holds exactly (`1`, `1.0`, `1e3`), else a `Double`.
/// A member name given twice keeps the first, as the decoder did
/// (``JSONDuplicateMembers`` refuses such tokens before their claims are read). Nesting is bounded by the
/// caller (``JSONDepth``), before this recursive descent runs.
enum JSONTokenParser {
    /// The value `bytes` holds, or nil when they are not one JSON value.
    static func value(_ bytes: [UInt8]) -> JSONConfigValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer)
            reader.skipWhitespace()
            guard let value = reader.value() else { return nil }
            reader.skipWhitespace()
            return reader.index == buffer.count ? value : nil
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        /// Consumes `word` (a literal such as `true`) when it comes next.
        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let start = word.utf8Start
            for offset in 0..<count where bytes[index + offset] != start[offset] { return false }
            index += count
            return true
        }

        mutating func value() -> JSONConfigValue? {
            switch peek {
            case UInt8(ascii: "{")?: return object()
            case UInt8(ascii: "[")?: return array()
            case UInt8(ascii: "\"")?: return string().map(JSONConfigValue.string)
            case UInt8(ascii: "t")?: return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f")?: return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n")?: return literal("null") ? .null : nil
            case let byte?
            where byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
                return number()
            default: return nil
            }
        }

        mutating func object() -> JSONConfigValue? {
            index += 1
            var members: [String: JSONConfigValue] = [:]
            skipWhitespace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard peek == UInt8(ascii: "\""), let name = string() else { return nil }
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { return nil }
                index += 1
                skipWhitespace()
                guard let member = value() else { return nil }
                if members[name] == nil { members[name] = member }
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ",")?: index += 1
                case UInt8(ascii: "}")?:
                    index += 1
                    return .object(members)
                default: return nil
                }
            }
        }

        mutating func array() -> JSONConfigValue? {
            index += 1
            var items: [JSONConfigValue] = []
            skipWhitespace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipWhitespace()
                guard let item = value() else { return nil }
                items.append(item)
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ",")?: index += 1
                case UInt8(ascii: "]")?:
                    index += 1
                    return .array(items)
                default: return nil
                }
            }
        }

        /// A string literal, the opening quote next.
        mutating func string() -> String? {
            index += 1
            let start = index
            // The common case: no escapes, so the bytes are the string.
            while let byte = peek, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { return nil }
                index += 1
            }
            guard let stop = peek else { return nil }
            var scalars = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            if stop == UInt8(ascii: "\"") {
                index += 1
                return String(validating: scalars, as: UTF8.self)
            }
            while true {
                guard let byte = peek else { return nil }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: scalars, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escape = peek else { return nil }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                    case UInt8(ascii: "b"): scalars.append(0x08)
                    case UInt8(ascii: "f"): scalars.append(0x0C)
                    case UInt8(ascii: "n"): scalars.append(0x0A)
                    case UInt8(ascii: "r"): scalars.append(0x0D)
                    case UInt8(ascii: "t"): scalars.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        scalars.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                default:
                    guard byte >= 0x20 else { return nil }
                    scalars.append(byte)
                }
            }
        }

        /// The scalar of a `\u` escape (its `\u` read), joining a surrogate pair.
        mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            switch high {
            case 0xD800...0xDBFF:
                guard literal("\\u"), let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00...0xDFFF: return nil
            default: return Unicode.Scalar(high)
            }
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// A number, its grammar checked here (Swift's parsers accept more, such as `+1`, `01` and `.5`).
        mutating func number() -> JSONConfigValue? {
            let start = index
            func digits(_ reader: inout Reader) -> Int {
                var count = 0
                while let byte = reader.peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    reader.index += 1
                    count += 1
                }
                return count
            }
            if peek == UInt8(ascii: "-") { index += 1 }
            let leadingZero = peek == UInt8(ascii: "0")
            let whole = digits(&self)
            guard whole > 0, !(leadingZero && whole > 1) else { return nil }
            var integral = true
            if peek == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { return nil }
                integral = false
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits(&self) > 0 else { return nil }
                integral = false
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if integral, let exact = Int(text) { return .integer(exact) }
            guard let double = Double(text), double.isFinite else { return nil }
            if let exact = Int(exactly: double) { return .integer(exact) }
            return .number(double)
        }
    }
}
