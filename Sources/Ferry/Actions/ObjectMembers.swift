import FerryHTTP
import Foundation

// `package`, not internal: ferry-fuzz feeds it client bytes directly (bench/fuzz/README.md).
/// The top-level members of a JSON object body, read without decoding the
/// values: each key's bytes and its value's JSON type (with the bytes of a
/// string or number). Enough to check field names and types in Swift before
/// PostgreSQL parses the body (see ``FieldPrecheck``).
///
/// It reads only what it is sure of. An escaped key, a syntax it does not
/// expect, anything after the object: `init` returns nil, and the caller
/// leaves the checking to PostgreSQL, as before.
package struct ObjectMembers {
    /// A member value's JSON type; strings and numbers keep where their bytes are.
    package enum Value: Equatable {
        /// A string's content (between the quotes); `escaped` when it has a backslash.
        case string(Range<Int>, escaped: Bool)
        /// A number's bytes, as written.
        case number(Range<Int>)
        case boolean
        case null
        case object
        case array
    }

    /// One member: the key's bytes (no quotes, never escaped), its value, and the
    /// value's bytes as written (a 410 lifts a tombstone's fields out this way).
    package struct Member {
        package let key: Range<Int>
        package let value: Value
        package let valueBytes: Range<Int>
    }

    package let members: [Member]

    /// The member named `name` that counts: the last of a key given twice, as jsonb
    /// keeps it, so Swift's checks read the value the SQL will read. `bytes` are the
    /// body these members were read from.
    package func last(named name: String, in bytes: [UInt8]) -> Member? {
        members.last { bytes[$0.key].elementsEqual(name.utf8) }
    }

    package init?(_ bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        var members: [Member] = []
        reader.skipSpace()
        guard reader.take(0x7B) else { return nil }  // {
        reader.skipSpace()
        if !reader.take(0x7D) {  // }
            while true {
                guard reader.take(0x22), let key = reader.string(), !key.escaped else { return nil }
                reader.skipSpace()
                guard reader.take(0x3A) else { return nil }  // :
                reader.skipSpace()
                let valueStart = reader.index
                guard let value = reader.value() else { return nil }
                members.append(Member(key: key.range, value: value, valueBytes: valueStart..<reader.index))
                reader.skipSpace()
                if reader.take(0x2C) { reader.skipSpace(); continue }  // ,
                guard reader.take(0x7D) else { return nil }
                break
            }
        }
        reader.skipSpace()
        guard reader.atEnd else { return nil }
        self.members = members
    }

    /// A cursor over the body's bytes.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// After an opening quote: the content up to the closing one.
        mutating func string() -> (range: Range<Int>, escaped: Bool)? {
            let start = index
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x22 {
                    index += 1
                    return (start..<index - 1, escaped)
                }
                if byte < 0x20 { return nil }
                if byte == 0x5C {  // backslash: skip the escaped byte
                    escaped = true
                    index += 1
                }
                index += 1
            }
            return nil
        }

        mutating func value() -> Value? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case 0x22:
                index += 1
                guard let string = string() else { return nil }
                return .string(string.range, escaped: string.escaped)
            case 0x2D, 0x30...0x39:  // - 0-9
                let start = index
                while index < bytes.count, Self.isNumberByte(bytes[index]) { index += 1 }
                return .number(start..<index)
            case 0x74: return word("true") ? .boolean : nil
            case 0x66: return word("false") ? .boolean : nil
            case 0x6E: return word("null") ? .null : nil
            case 0x7B, 0x5B:  // { [
                let kind: Value = bytes[index] == 0x7B ? .object : .array
                return skipNested() ? kind : nil
            default:
                return nil
            }
        }

        private static func isNumberByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2B || byte == 0x2E || byte == 0x65 || byte == 0x45
        }

        private mutating func word(_ text: String) -> Bool {
            let count = text.utf8.count
            guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(text.utf8) else { return false }
            index += count
            return true
        }

        /// Past a nested object or array (its syntax is PostgreSQL's to check).
        private mutating func skipNested() -> Bool {
            var depth = 0
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case 0x22:
                    guard string() != nil else { return false }
                case 0x7B, 0x5B:
                    depth += 1
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth == 0 { return true }
                default:
                    break
                }
            }
            return false
        }
    }
}
