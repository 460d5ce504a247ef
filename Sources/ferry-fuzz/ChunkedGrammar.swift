/// The chunked transfer coding's grammar (RFC 9112 §7.1), written apart from the
/// parser as an oracle, with the choices Ferry documents: at most 16 size digits,
/// whitespace allowed where the grammar has BWS (before `;`, around `=`) and nowhere else,
/// trailer lines as header field lines (no obs-fold, no space before the colon).
enum ChunkedGrammar {
    /// What the oracle makes of the bytes after a chunked head.
    enum Verdict: Equatable {
        /// One complete chunked body with this content, then at most 8 empty lines.
        case valid([UInt8])
        /// Not a complete chunked body (or more follows it).
        case invalid
        /// Near one of the parser's limits, where the oracle does not judge.
        case notJudged
    }

    static func judge(_ b: [UInt8], bodyLimit: Int, trailerBytes: Int, trailerFields: Int) -> Verdict {
        var i = 0, body: [UInt8] = [], extensionBytes = 0
        func line() -> Range<Int>? {
            var j = i
            while j + 1 < b.count, !(b[j] == 0x0D && b[j + 1] == 0x0A) {
                if b[j] == 0x0A || b[j] == 0x0D { return nil }
                j += 1
            }
            guard j + 1 < b.count else { return nil }
            defer { i = j + 2 }
            return i..<j
        }
        while true {
            guard let sizeLine = line() else { return .invalid }
            guard sizeLine.count < 4000 else { return .notJudged }
            var k = sizeLine.lowerBound, size = 0
            while k < sizeLine.upperBound, let digit = hex(b[k]) {
                size = min(size * 16 + digit, Int(UInt32.max))
                k += 1
            }
            guard (1...16).contains(k - sizeLine.lowerBound), extensions(b, k..<sizeLine.upperBound) else { return .invalid }
            extensionBytes += sizeLine.upperBound - k
            guard extensionBytes < 60_000 else { return .notJudged }
            if size == 0 { break }
            guard body.count + size <= bodyLimit else { return .notJudged }
            guard i + size + 1 < b.count, b[i + size] == 0x0D, b[i + size + 1] == 0x0A else { return .invalid }
            body += b[i..<(i + size)]
            i += size + 2
        }
        var fieldBytes = 0, fields = 0
        while true {
            guard let field = line() else { return .invalid }
            if field.isEmpty { break }
            fieldBytes += field.count + 2
            fields += 1
            guard fieldBytes < trailerBytes - 8, fields < trailerFields else { return .notJudged }
            guard fieldLine(b[field]) else { return .invalid }
        }
        var emptyLines = 0
        while i < b.count {
            guard i + 1 < b.count, b[i] == 0x0D, b[i + 1] == 0x0A, emptyLines < 8 else { return .invalid }
            i += 2
            emptyLines += 1
        }
        return .valid(body)
    }

    /// `*( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )`.
    static func extensions(_ b: [UInt8], _ range: Range<Int>) -> Bool {
        var k = range.lowerBound
        let end = range.upperBound
        func blanks() { while k < end, b[k] == 0x20 || b[k] == 0x09 { k += 1 } }
        func token() -> Bool {
            let start = k
            while k < end, RequestInvariants.isTokenByte(b[k]) { k += 1 }
            return k > start
        }
        while k < end {
            blanks()
            guard k < end, b[k] == 0x3B else { return false }
            k += 1
            blanks()
            guard token() else { return false }
            let afterName = k
            blanks()
            guard k < end, b[k] == 0x3D else {
                // BWS belongs before "=" or the next ";": give it back to the loop.
                k = afterName
                continue
            }
            k += 1
            blanks()
            if k < end, b[k] == 0x22 {
                k += 1
                var closed = false
                while k < end, !closed {
                    switch b[k] {
                    case 0x22: closed = true
                    case 0x5C:
                        guard k + 1 < end, isQuotable(b[k + 1]) else { return false }
                        k += 1
                    default:
                        guard isQuotable(b[k]) else { return false }
                    }
                    k += 1
                }
                guard closed else { return false }
            } else if !token() {
                return false
            }
        }
        return true
    }

    /// `field-name ":" OWS field-value OWS`, no leading whitespace, nothing before the colon.
    static func fieldLine(_ line: ArraySlice<UInt8>) -> Bool {
        guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex else { return false }
        return line[..<colon].allSatisfy(RequestInvariants.isTokenByte) && line[(colon + 1)...].allSatisfy(isQuotable)
    }

    /// HTAB, SP, VCHAR and obs-text: what a quoted pair, a quoted string and a field value may hold.
    static func isQuotable(_ byte: UInt8) -> Bool { byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }

    private static func hex(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}
