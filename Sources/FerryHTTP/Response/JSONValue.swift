/// A JSON value for problem members and other small documents, written
/// without Foundation. `.raw` embeds bytes that are already JSON (for
/// example a row PostgreSQL rendered), unchecked.
public indirect enum JSONValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral,
    ExpressibleByArrayLiteral
{
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    /// Members in the order given.
    case object([(String, JSONValue)])
    /// Already-encoded JSON, copied verbatim.
    case raw([UInt8])

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// Appends the JSON text of this value.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .string(let s): Self.writeString(s, into: &out)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            // JSON has no NaN or infinity.
            if d.isFinite { out.append(contentsOf: String(d).utf8) } else { out.append(contentsOf: "null".utf8) }
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .null: out.append(contentsOf: "null".utf8)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (name, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(name, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .raw(let bytes): out.append(contentsOf: bytes)
        }
    }

    /// The JSON text as bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    /// Appends a JSON string literal, escaping quotes, backslashes and control characters.
    ///
    /// Over the string's contiguous UTF-8, copying runs that need no escape whole: every
    /// JSON log line and problem body passes through here, and a byte-by-byte walk of the
    /// UTF-8 view (with a lookup table allocated per call) was a large part of the cost of
    /// a JSON request log line.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        out.append(UInt8(ascii: "\""))
        s.withUTF8 { bytes in
            var run = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if run < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index])) }
                run = index + 1
                out.append(92)
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
                case 10: out.append(UInt8(ascii: "n"))
                case 13: out.append(UInt8(ascii: "r"))
                case 9: out.append(UInt8(ascii: "t"))
                default:
                    // \u00XX; a control character's high nibble is 0 or 1.
                    let low = byte & 0xF
                    out.append(UInt8(ascii: "u"))
                    out.append(48)
                    out.append(48)
                    out.append(48 + (byte >> 4))
                    out.append(low < 10 ? 48 + low : 87 + low)
                }
            }
            if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}
