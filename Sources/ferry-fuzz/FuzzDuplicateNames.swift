import Foundation

/// Whether a JSON text has a member name twice in one object: the fuzz
/// target's own reading, a recursive descent written apart from Ferry's
/// scanner (`JSONDuplicateMembers`), so that the property checks one against
/// the other. Names are decoded with JSONSerialization and compared as Swift
/// strings, as Ferry's decoder compares them. Nil when the text is not JSON
/// this reader follows (the property then says nothing).
enum FuzzDuplicateNames {
    static func check(_ text: Data) -> Bool? {
        var reader = Reader(bytes: Array(text))
        guard let duplicated = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.at == reader.bytes.count ? duplicated : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
        }

        /// Reads one value; whether an object in it repeats a name, nil when unreadable.
        mutating func value(depth: Int) -> Bool? {
            skipSpace()
            guard at < bytes.count, depth < 64 else { return nil }
            switch bytes[at] {
            case UInt8(ascii: "{"):
                at += 1
                var names = Set<String>()
                var duplicated = false
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return false }
                while true {
                    skipSpace()
                    guard let name = string() else { return nil }
                    if !names.insert(name).inserted { duplicated = true }
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                    at += 1
                    guard let inner = value(depth: depth + 1) else { return nil }
                    duplicated = duplicated || inner
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    at += 1
                    if bytes[at - 1] == UInt8(ascii: "}") { return duplicated }
                    guard bytes[at - 1] == UInt8(ascii: ",") else { return nil }
                }
            case UInt8(ascii: "["):
                at += 1
                var duplicated = false
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return false }
                while true {
                    guard let inner = value(depth: depth + 1) else { return nil }
                    duplicated = duplicated || inner
                    skipSpace()
                    guard at < bytes.count else { return nil }
                    at += 1
                    if bytes[at - 1] == UInt8(ascii: "]") { return duplicated }
                    guard bytes[at - 1] == UInt8(ascii: ",") else { return nil }
                }
            case UInt8(ascii: "\""):
                return string() == nil ? nil : false
            default:
                // A number, true, false or null: up to the next delimiter.
                let start = at
                while at < bytes.count, !Set(",]} \t\r\n".utf8).contains(bytes[at]) { at += 1 }
                return at > start ? false : nil
            }
        }

        /// One string literal, decoded.
        mutating func string() -> String? {
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
            let start = at
            at += 1
            while at < bytes.count, bytes[at] != UInt8(ascii: "\"") { at += bytes[at] == UInt8(ascii: "\\") ? 2 : 1 }
            guard at < bytes.count else { return nil }
            at += 1
            let literal = Data(bytes[start..<at])
            return (try? JSONSerialization.jsonObject(with: literal, options: .fragmentsAllowed)) as? String
        }
    }
}
