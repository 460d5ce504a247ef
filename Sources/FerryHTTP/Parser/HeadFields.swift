// The header section (RFC 9112 §5): one field line at a time, and, once the head is
// complete, the framing its fields decide (§6.3: length, chunked, keep-alive, 100-continue).

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

/// How a request's body is delimited, decided from its head alone (RFC 9112 §6.3).
enum BodyFraming: Equatable {
    /// Exactly this many bytes follow the head (0: no body).
    case length(Int)
    /// A chunked body follows.
    case chunked
}

/// The connection-level facts of a request head: framing, keep-alive, 100-continue.
struct MessageFraming {
    var body: BodyFraming
    var keepAlive: Bool
    var expectsContinue: Bool

    /// Derives framing from the head, refusing anything ambiguous.
    ///
    /// Repeated Content-Length values that are all equal (`5, 5` or two fields of `5`)
    /// are accepted as RFC 9110 §8.6 allows; differing ones are refused.
    static func resolve(headers: HTTPHeaders, version: HTTPVersion, limits: HTTPLimits) throws(HTTPError) -> MessageFraming {
        let fields = FramingFields(headers)
        let hosts = fields.hostCount
        if hosts > 1 { throw .badRequest("More than one Host header field.") }
        if hosts == 0, version.minor >= 1 { throw .badRequest("An HTTP/1.1 request needs a Host header field.") }
        // Singletons (RFC 9110 §5.3: not lists, so never combined): with two, which one a
        // proxy in front acted on and which one the handler reads could differ.
        if fields.authorizationCount > 1 { throw .badRequest("More than one Authorization header field.") }
        if fields.contentTypeCount > 1 { throw .badRequest("More than one Content-Type header field.") }

        let transferEncodings = fields.transferEncoding
        let contentLengths = fields.contentLength
        let body: BodyFraming
        if !transferEncodings.isEmpty {
            if !contentLengths.isEmpty {
                throw .badRequest("Content-Length and Transfer-Encoding together are ambiguous.")
            }
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
            if version.minor == 0 { throw .badRequest("Transfer-Encoding is not allowed in HTTP/1.0.") }
            try checkTransferCodings(transferEncodings)
            body = .chunked
        } else if !contentLengths.isEmpty {
            let length = try contentLength(contentLengths)
            if length > limits.maxBodyBytes { throw .payloadTooLarge(limit: limits.maxBodyBytes) }
            body = .length(length)
        } else {
            body = .length(0)
        }

        let connection = listElements(fields.connection)
        let keepAlive: Bool
        if connection.contains(where: { equalsIgnoringCase($0, "close") }) {
            keepAlive = false
        } else if version.minor == 0 {
            keepAlive = connection.contains { equalsIgnoringCase($0, "keep-alive") }
        } else {
            keepAlive = true
        }

        // RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request is ignored.
        let expects =
            version.minor >= 1 && body != .length(0)
            && listElements(fields.expect).contains { equalsIgnoringCase($0, "100-continue") }
        return MessageFraming(body: body, keepAlive: keepAlive, expectsContinue: expects)
    }

    /// Only `chunked`, exactly once and last, is understood.
    private static func checkTransferCodings(_ values: [String]) throws(HTTPError) {
        let codings = listElements(values)
        guard let last = codings.last else { throw .badRequest("Transfer-Encoding is empty.") }
        let chunkedCount = codings.count { equalsIgnoringCase($0, "chunked") }
        if chunkedCount > 1 { throw .badRequest("The chunked transfer coding is applied more than once.") }
        if chunkedCount == 1, !equalsIgnoringCase(last, "chunked") {
            throw .badRequest("The chunked transfer coding must be the last one.")
        }
        if let unknown = codings.first(where: { !equalsIgnoringCase($0, "chunked") }) {
            throw .notImplemented("The transfer coding `\(String(decoding: unknown, as: UTF8.self))` is not supported.")
        }
    }

    /// The single length all Content-Length values agree on; digits only, no sign, no overflow.
    private static func contentLength(_ values: [String]) throws(HTTPError) -> Int {
        var agreed: Int?
        for value in values {
            for element in value.utf8.split(separator: ASCII.comma, omittingEmptySubsequences: false) {
                let digits = trimmed(element)
                guard !digits.isEmpty, digits.allSatisfy(ASCII.isDigit) else {
                    throw .badRequest("Content-Length must be a non-negative decimal number.")
                }
                var n = 0
                for d in digits {
                    let (times10, o1) = n.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times10.addingReportingOverflow(Int(d - 0x30))
                    if o1 || o2 { throw .badRequest("Content-Length is too large to represent.") }
                    n = sum
                }
                if let agreed, agreed != n { throw .badRequest("Conflicting Content-Length values.") }
                agreed = n
            }
        }
        guard let agreed else { throw .badRequest("Content-Length is empty.") }
        return agreed
    }

    /// The non-empty, OWS-trimmed elements of comma-separated list fields (RFC 9110 §5.6.1).
    static func listElements(_ values: [String]) -> [Substring.UTF8View] {
        values.flatMap { value in
            value.utf8.split(separator: ASCII.comma).map(trimmed).filter { !$0.isEmpty }
        }
    }

    private static func trimmed(_ s: Substring.UTF8View) -> Substring.UTF8View {
        var s = s
        while let f = s.first, ASCII.isWhitespace(f) { s.removeFirst() }
        while let l = s.last, ASCII.isWhitespace(l) { s.removeLast() }
        return s
    }

    static func equalsIgnoringCase(_ s: Substring.UTF8View, _ lowercase: StaticString) -> Bool {
        let p = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return s.count == p.count && zip(s, p).allSatisfy { ASCII.lower($0) == $1 }
    }
}

/// The header fields that decide framing and connection handling, and the singletons that
/// must come once, gathered in one pass over the head so that a request costs one scan
/// rather than one per field name.
struct FramingFields {
    var hostCount = 0
    var authorizationCount = 0
    var contentTypeCount = 0
    var transferEncoding: [String] = []
    var contentLength: [String] = []
    var connection: [String] = []
    var expect: [String] = []

    init(_ headers: HTTPHeaders) {
        for field in headers.fields {
            // Dispatch on length first: most fields match none of these names.
            switch field.name.utf8.count {
            case 4 where HTTPHeaders.equalNames(field.name, "Host"): hostCount += 1
            case 6 where HTTPHeaders.equalNames(field.name, "Expect"): expect.append(field.value)
            case 10 where HTTPHeaders.equalNames(field.name, "Connection"): connection.append(field.value)
            case 12 where HTTPHeaders.equalNames(field.name, "Content-Type"): contentTypeCount += 1
            case 13 where HTTPHeaders.equalNames(field.name, "Authorization"): authorizationCount += 1
            case 14 where HTTPHeaders.equalNames(field.name, "Content-Length"): contentLength.append(field.value)
            case 17 where HTTPHeaders.equalNames(field.name, "Transfer-Encoding"): transferEncoding.append(field.value)
            default: break
            }
        }
    }
}
