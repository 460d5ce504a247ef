// The chunked transfer coding of request bodies (RFC 9112 §7.1): chunk-size
// lines (`ChunkSizeLine`), chunk data, trailers and the fields a trailer may
// not carry. Apart from the head because only chunked requests come here.

/// The chunked transfer coding (RFC 9112 §7.1), de-chunked straight into the body.
extension RequestParser {
    /// Fields that must not arrive as trailers because they frame, route, authenticate or
    /// condition the request (RFC 9110 §6.5.1); they are counted against the limits and dropped,
    /// so a handler never sees one that the head did not carry.
    static let forbiddenTrailers: Set<String> = [
        "authorization", "cache-control", "connection", "content-encoding", "content-length",
        "content-range", "content-type", "cookie", "expect", "host", "if-match", "if-modified-since",
        "if-none-match", "if-range", "if-unmodified-since", "keep-alive", "max-forwards",
        "proxy-authorization", "range", "te", "trailer", "transfer-encoding", "upgrade",
    ]

    static func isForbiddenTrailer(_ name: String) -> Bool {
        forbiddenTrailers.contains(String(decoding: name.utf8.map(ASCII.lower), as: UTF8.self))
    }

    /// Reads a chunk-size line; true when it was complete.
    mutating func readChunkSize(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        switch try scanLine(p, limit: Self.maxChunkLineBytes) {
        case .needMore:
            return false
        case .tooLong:
            throw .badRequest("A chunk size line exceeds \(Self.maxChunkLineBytes) bytes.")
        case .line(let content, let next):
            let (size, extensionBytes) = try ChunkSizeLine.parse(bytes(p, content))
            consume(upTo: next)
            // Without a total, tiny chunks with long extensions would let a client stream far
            // more than maxBodyBytes through the parser while staying under the body limit.
            chunkExtensionBytes += extensionBytes
            guard chunkExtensionBytes <= Self.maxChunkExtensionBytes else {
                throw .badRequest("Chunk extensions exceed \(Self.maxChunkExtensionBytes) bytes in total.")
            }
            if size == 0 {
                phase = .trailers
            } else {
                // Refuse before reading: the declared chunk alone would cross the limit.
                guard size <= UInt64(limits.maxBodyBytes - body.count) else {
                    throw .payloadTooLarge(limit: limits.maxBodyBytes)
                }
                phase = .chunkData(remaining: Int(size))
            }
            return true
        }
    }

    /// Reads the CRLF that must follow chunk data; true when it was there.
    mutating func readChunkDataEnd(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        let available = p.count - readIndex
        if available >= 1, p[readIndex] != ASCII.cr || (available >= 2 && p[readIndex + 1] != ASCII.lf) {
            throw .badRequest("Chunk data must be followed by CRLF.")
        }
        guard available >= 2 else { return false }
        consume(upTo: readIndex + 2)
        phase = .chunkSize
        return true
    }

    /// Reads the trailer section; true once its empty line is read.
    mutating func readTrailers(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        try readFieldLines(p, trailers: true)
    }
}

/// `chunk-size [ chunk-ext ]` of a chunked body (RFC 9112 §7.1), CRLF already removed.
enum ChunkSizeLine {
    /// More hex digits than this cannot be a size we would ever accept, and would overflow.
    static let maxDigits = 16

    /// The chunk size and the length of what follows it (extensions). Extensions are checked
    /// against the `chunk-ext` grammar and otherwise ignored; the caller bounds their length.
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> (size: UInt64, extensionBytes: Int) {
        var i = 0
        var size: UInt64 = 0
        while i < line.count, let digit = ASCII.hexValue(line[i]) {
            guard i < maxDigits else { throw .badRequest("A chunk size has more than \(maxDigits) hex digits.") }
            size = size << 4 | UInt64(digit)
            i += 1
        }
        guard i > 0 else { throw .badRequest("A chunk size is missing or not hexadecimal.") }
        var j = i
        while j < line.count, ASCII.isWhitespace(line[j]) { j += 1 }
        guard j < line.count else {
            if j > i { throw .badRequest("Whitespace after a chunk size must introduce an extension.") }
            return (size, 0)
        }
        guard line[j] == ASCII.semicolon else { throw .badRequest("Unexpected characters after a chunk size.") }
        try validateExtensions(line, from: j)
        return (size, line.count - i)
    }

    /// `chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )`, with
    /// `chunk-ext-val = token / quoted-string` (RFC 9112 §7.1.1). Servers that ignore
    /// extensions still have to find where they end; one that accepts what others refuse
    /// (an empty name, an unclosed quote) is a candidate for a framing disagreement with a
    /// proxy in front of it, so the grammar is checked whole, as llhttp does.
    static func validateExtensions(_ line: UnsafeBufferPointer<UInt8>, from start: Int) throws(HTTPError) {
        var k = start
        func skipWhitespace() { while k < line.count, ASCII.isWhitespace(line[k]) { k += 1 } }
        func token() -> Bool {
            let first = k
            while k < line.count, ASCII.isTchar(line[k]) { k += 1 }
            return k > first
        }
        while k < line.count {
            skipWhitespace()
            guard k < line.count, line[k] == ASCII.semicolon else {
                throw .badRequest("A chunk extension must start with ';'.")
            }
            k += 1
            skipWhitespace()
            guard token() else { throw .badRequest("A chunk extension has no name.") }
            let afterName = k
            skipWhitespace()
            guard k < line.count, line[k] == UInt8(ascii: "=") else {
                // Whitespace after a name belongs before "=" or the next ";". At the line's end
                // it is trailing, refused as it is after a value (the fuzzer found the two
                // treated differently).
                guard k < line.count || k == afterName else {
                    throw .badRequest("A chunk extension ends in whitespace.")
                }
                continue
            }
            k += 1
            skipWhitespace()
            if k < line.count, line[k] == UInt8(ascii: "\"") {
                try quotedString(line, at: &k)
            } else if !token() {
                throw .badRequest("A chunk extension's value is neither a token nor a quoted string.")
            }
        }
    }

    /// Moves past `quoted-string` starting at its opening quote.
    static func quotedString(_ line: UnsafeBufferPointer<UInt8>, at k: inout Int) throws(HTTPError) {
        k += 1
        while k < line.count {
            let b = line[k]
            switch b {
            case UInt8(ascii: "\""):
                k += 1
                return
            case UInt8(ascii: "\\"):
                guard k + 1 < line.count, ASCII.isFieldValueByte(line[k + 1]) else {
                    throw .badRequest("A chunk extension has a bad escape in a quoted string.")
                }
                k += 2
            default:
                // qdtext: HTAB, SP, VCHAR except '"' and '\\', obs-text.
                guard ASCII.isFieldValueByte(b) else { throw .badRequest("A chunk extension contains a control character.") }
                k += 1
            }
        }
        throw .badRequest("A chunk extension has an unterminated quoted string.")
    }
}
