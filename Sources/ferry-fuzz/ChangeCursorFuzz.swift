import Ferry

/// Changes cursors (`since=`). The first byte picks the form of the rest:
/// 0: the text as sent; 1: `1` and the bytes mapped onto base64url; 2 and up: a cursor
/// built from the bytes (transaction id, resource, id, and a base for some positions) and printed.
///
/// Properties: a cursor that parses prints back to exactly the text it came from,
/// and parses again to the same position; a cursor Ferry prints (any xid up to
/// `Int64.max`, a resource name, an id of up to 1,024 bytes, no NULs) parses back to
/// itself.
enum ChangeCursorFuzz {
    static func run(_ input: UnsafeRawBufferPointer) {
        guard let mode = input.first else { return }
        let rest = Array(input.dropFirst())
        switch mode {
        case 0: checkParse(String(decoding: rest, as: UTF8.self))
        case 1: checkParse("1" + Base64URLAlphabet.text(rest))
        default: checkPrint(rest)
        }
    }

    static func checkParse(_ text: String) {
        guard let cursor = ChangeCursor(token: text) else { return }
        require(cursor.token == text, "cursor \(text.debugDescription) prints back as \(cursor.token.debugDescription)")
        require(ChangeCursor(token: cursor.token) == cursor, "a printed cursor does not parse back")
        require(cursor.afterXID <= UInt64(Int64.max), "xid \(cursor.afterXID) beyond PostgreSQL's bigint")
        require(cursor.base <= UInt64(Int64.max), "base \(cursor.base) beyond PostgreSQL's bigint")
        require(cursor.position != nil || cursor.base == 0, "a frontier cursor with a base")
    }

    static func checkPrint(_ bytes: [UInt8]) {
        guard bytes.count >= 9 else { return }
        let xid = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & UInt64(Int64.max)
        let rest = bytes[8...]
        let cursor: ChangeCursor
        if rest.first! & 1 == 0 {
            cursor = ChangeCursor(afterXID: xid)
        } else {
            // Resource names are PostgreSQL identifiers (at most 63 bytes); ids are bounded by the cursor format.
            let text = String(decoding: rest.dropFirst().filter { $0 != 0 }, as: UTF8.self)
            let split = text.index(text.startIndex, offsetBy: min(text.count / 2, 20))
            let resource = String(text[..<split]), id = String(text[split...].prefix(1024))
            guard !resource.isEmpty, !id.isEmpty, resource.utf8.count <= 63, id.utf8.count <= 1024 else { return }
            // Bit 1 of the same byte: a position of a download from the start, with a base.
            let base = rest.first! & 2 == 0 ? 0 : (xid >> 1) | 1
            cursor = ChangeCursor(afterXID: xid, position: (resource, id), base: base)
        }
        require(ChangeCursor(token: cursor.token) == cursor, "cursor \(cursor.token) does not parse back to itself")
    }
}
