/// `chunk-size [ chunk-ext ]` of a chunked body (RFC 9112 §7.1), CRLF already removed.
enum ChunkSizeLine {
    /// More hex digits than this cannot be a size we would ever accept, and would overflow.
    static let maxDigits = 16

    /// The chunk size and the length of what follows it (extensions). Extensions are checked
    /// for control characters and otherwise ignored; the caller bounds their length.
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
        for k in j..<line.count where !ASCII.isFieldValueByte(line[k]) {
            throw .badRequest("A chunk extension contains a control character.")
        }
        return (size, line.count - i)
    }
}
