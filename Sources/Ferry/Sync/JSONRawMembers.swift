/// The top-level members of a JSON object as they are written: each key and the
/// bytes of its value, not decoded. A 410's body lifts the tombstone's fields
/// out of the row PostgreSQL wrote this way, with no parse and re-encode.
///
/// It expects well-formed JSON (PostgreSQL's output) and returns nil for
/// anything else, and for a key with an escape, which no column name has.
enum JSONRawMembers {
    static func of(_ bytes: [UInt8]) -> [(key: String, value: ArraySlice<UInt8>)]? {
        var index = 0
        func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        /// Moves past a string whose opening quote is at `index`; false when it never closes.
        func skipString() -> Bool {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case 0x5C: index += 2  // a backslash and the byte it escapes
                case 0x22:
                    index += 1
                    return true
                default: index += 1
                }
            }
            return false
        }
        skipSpace()
        guard index < bytes.count, bytes[index] == 0x7B else { return nil }  // {
        index += 1
        skipSpace()
        var members: [(key: String, value: ArraySlice<UInt8>)] = []
        if index < bytes.count, bytes[index] == 0x7D { return members }  // }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == 0x22 else { return nil }
            let keyStart = index + 1
            guard skipString() else { return nil }
            let key = bytes[keyStart..<(index - 1)]
            guard !key.contains(0x5C) else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == 0x3A else { return nil }  // :
            index += 1
            skipSpace()
            let valueStart = index
            var depth = 0
            scan: while index < bytes.count {
                switch bytes[index] {
                case 0x22:
                    guard skipString() else { return nil }
                    continue scan
                case 0x7B, 0x5B: depth += 1  // { [
                case 0x7D, 0x5D:  // } ]
                    if depth == 0 { break scan }
                    depth -= 1
                case 0x2C where depth == 0: break scan  // ,
                default: break
                }
                index += 1
            }
            guard index < bytes.count, depth == 0 else { return nil }
            var valueEnd = index
            while valueEnd > valueStart, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[valueEnd - 1]) { valueEnd -= 1 }
            guard valueEnd > valueStart else { return nil }
            members.append((String(decoding: key, as: UTF8.self), bytes[valueStart..<valueEnd]))
            if bytes[index] == 0x7D {  // }
                index += 1
                skipSpace()
                return index == bytes.count ? members : nil
            }
            index += 1  // ,
        }
    }
}
