/// One `field-name ":" OWS field-value OWS` line of a header or trailer section (RFC 9112 §5).
enum FieldLine {
    /// Parses a field line, CRLF already removed, into its name and trimmed value.
    ///
    /// Refused: a line starting with whitespace (obs-fold, RFC 9112 §5.2), whitespace
    /// before the colon (§5.1, a classic smuggling vector), a name that is not a token,
    /// and control characters other than HTAB in the value (CR and NUL included).
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> (name: String, value: String) {
        guard let first = line.first else { throw .badRequest("Empty header field line.") }
        if ASCII.isWhitespace(first) {
            throw .badRequest("Header line folding (obs-fold) is not accepted.")
        }
        var colon = 0
        while colon < line.count, ASCII.isTchar(line[colon]) { colon += 1 }
        guard colon < line.count else { throw .badRequest("A header field line has no colon.") }
        switch line[colon] {
        case ASCII.colon where colon > 0:
            break
        case ASCII.colon:
            throw .badRequest("A header field has an empty name.")
        case ASCII.space, ASCII.tab:
            throw .badRequest("Whitespace between a header field name and its colon is not allowed.")
        default:
            throw .badRequest("A header field name contains a forbidden character.")
        }
        var start = colon + 1
        var end = line.count
        for i in start..<end where !ASCII.isFieldValueByte(line[i]) {
            throw .badRequest("A header field value contains a control character.")
        }
        while start < end, ASCII.isWhitespace(line[start]) { start += 1 }
        while end > start, ASCII.isWhitespace(line[end - 1]) { end -= 1 }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        let value = String(decoding: UnsafeBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
        return (name, value)
    }
}
