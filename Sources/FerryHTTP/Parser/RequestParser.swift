// The incremental HTTP/1.1 request parser (RFC 9112), from bytes to
// `ParseEvent`s: the parser's buffer and phases, line scanning, the request
// line (`RequestLine`, `RequestTarget`, `PercentDecoding`), field lines
// (`FieldLine`), the framing decision at the end of the head
// (`MessageFraming`, `FramingFields`, `BodyFraming`), fixed-length bodies, the
// byte classes of the grammar (`ASCII`) and the refusals the parser throws. The
// chunked coding is in RequestParser+Chunked.swift. A request without a chunked
// body is parsed by this file alone.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental HTTP/1.1 request parser (RFC 9112) over a flat byte buffer.
///
/// Feed it whatever the socket delivered with `append`, then call `next()`
/// until it answers `.needMore`. Requests come out one per call, in order,
/// so pipelined requests need no special handling. Every limit in
/// `HTTPLimits` is enforced as soon as it is exceeded, before the offending
/// bytes are buffered further, and scanning resumes where it stopped, so
/// feeding one byte at a time stays linear.
///
/// Every refusal closes the connection and leaves the parser dead.
///
/// Accounting: the request line limit counts the line without its CRLF. The
/// header limit counts every header and trailer field line with its CRLF, but
/// not the empty line ending a section. Lines must end in CRLF; bare LF and
/// bare CR are refused: RFC 9112 §2.2 merely allows a bare LF, and two parsers
/// that disagree on line endings are how requests get smuggled.
///
/// Choices where the RFCs leave room: repeated Content-Length values that all
/// agree (`5, 5`, or two fields of `5`) are accepted (RFC 9110 §8.6). Trailer
/// fields are appended to the headers, except those that frame, route,
/// authenticate or condition a request (RFC 9110 §6.5.1), which are dropped.
public struct RequestParser: Sendable {
    public let limits: HTTPLimits

    /// Empty lines tolerated before a request line (RFC 9112 §2.2 asks for at least one).
    static let maxLeadingEmptyLines = 8
    /// Longest chunk-size line, extensions and CRLF included.
    static let maxChunkLineBytes = 4096
    /// Most bytes of chunk extensions in one request, all chunks together.
    static let maxChunkExtensionBytes = 64 * 1024
    /// Consumed bytes at the buffer front that justify moving the rest down.
    static let compactionThreshold = 4096
    /// A drained buffer with more capacity than this is freed rather than kept.
    static let retainedCapacity = 64 * 1024

    enum Phase: Sendable {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
    }

    var buffer: [UInt8] = []
    /// First byte not yet consumed.
    var readIndex = 0
    /// Where the search for the current line's LF resumes; never below `readIndex`.
    var scanIndex = 0
    var phase: Phase = .head
    /// The request whose request line has been parsed, headers accumulating.
    var request: HTTPRequest?
    var body: [UInt8] = []
    /// Bytes of header and trailer field lines so far, CRLFs included, final empty line excluded.
    var headerBytes = 0
    /// Header and trailer fields so far, dropped trailers included.
    var fieldCount = 0
    var leadingEmptyLines = 0
    /// Bytes of chunk extensions in the current request.
    var chunkExtensionBytes = 0
    /// Set once a request is refused; the parser is dead from then on.
    var failure: HTTPError?

    public init(limits: HTTPLimits) {
        self.limits = limits
    }

    /// Appends received bytes to the internal flat byte buffer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        compact()
        bytes.withMemoryRebound(to: UInt8.self) { buffer.append(contentsOf: $0) }
    }

    /// Appends received bytes to the internal flat byte buffer.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Advances as far as the buffered bytes allow and reports what happened.
    public mutating func next() -> ParseEvent {
        if let failure { return .error(failure) }
        let event: ParseEvent
        do {
            // A second reference keeps `buffer` readable while `self` is mutated; nothing
            // writes to `buffer` before it is dropped, so no copy is ever made.
            let bytes = buffer
            event = try bytes.withUnsafeBufferPointer { p throws(HTTPError) in try advance(p) }
        } catch {
            failure = error
            buffer = []
            request = nil
            body = []
            return .error(error)
        }
        return event
    }

    /// True when at least one byte of a not-yet-complete request has been buffered
    /// (the server uses header timeout vs idle timeout on this).
    public var hasPartialRequest: Bool {
        guard failure == nil else { return false }
        if case .head = phase { return request != nil || readIndex < buffer.count }
        return true
    }

    /// True while inside a request's head (request line + headers), false while reading a body or idle.
    public var isReadingHead: Bool {
        guard case .head = phase else { return false }
        return hasPartialRequest
    }

    /// Drops consumed bytes from the buffer front when that is cheap relative to what was
    /// consumed: the bytes moved never outnumber the bytes dropped, so total work stays linear.
    mutating func compact() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            if buffer.capacity > Self.retainedCapacity {
                buffer = []
            } else {
                buffer.removeAll(keepingCapacity: true)
            }
        } else if readIndex >= Self.compactionThreshold, readIndex >= buffer.count - readIndex {
            buffer.removeSubrange(0..<readIndex)
        } else {
            return
        }
        scanIndex -= readIndex
        readIndex = 0
    }
}

/// What `RequestParser.next()` found in the bytes buffered so far.
public enum ParseEvent: Sendable {
    /// Nothing more can be decided until more bytes arrive.
    case needMore
    /// The head is complete, the request carries `Expect: 100-continue` and a body, and none of the body
    /// has arrived. Emitted once per such request; the server sends `100 Continue` and calls next() again.
    /// If the head must be refused (e.g. Content-Length over the limit), `.error` comes instead.
    case expectContinue
    /// One complete request, body included.
    case request(HTTPRequest)
    /// The request is refused. After an error with closeConnection == true the parser is dead:
    /// every later next() returns the same error.
    case error(HTTPError)
}

/// The state machine: head, then a fixed or chunked body, then the next head.
extension RequestParser {
    /// Runs phases until an event can be reported.
    mutating func advance(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> ParseEvent {
        while true {
            switch phase {
            case .head:
                guard try readHead(p) else { return .needMore }
                if let event = try finishHead(p) { return event }
            case .fixedBody(let remaining):
                let left = copyBody(p, upTo: remaining)
                guard left == 0 else {
                    phase = .fixedBody(remaining: left)
                    return .needMore
                }
                return .request(complete())
            case .chunkSize:
                guard try readChunkSize(p) else { return .needMore }
            case .chunkData(let remaining):
                let left = copyBody(p, upTo: remaining)
                guard left == 0 else {
                    phase = .chunkData(remaining: left)
                    return .needMore
                }
                phase = .chunkDataEnd
            case .chunkDataEnd:
                guard try readChunkDataEnd(p) else { return .needMore }
            case .trailers:
                guard try readTrailers(p) else { return .needMore }
                return .request(complete())
            }
        }
    }

    /// Decides framing once the head is complete. Returns the event to report now,
    /// or nil to go on reading the body.
    mutating func finishHead(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> ParseEvent? {
        guard let head = request else { preconditionFailure("head finished without a request line") }
        let framing = try MessageFraming.resolve(headers: head.headers, version: head.version, limits: limits)
        request?.keepAlive = framing.keepAlive
        switch framing.body {
        case .length(0):
            return .request(complete())
        case .length(let length):
            // Reserve for what is likely to come soon, not for what the client merely claims.
            body.reserveCapacity(min(length, Self.retainedCapacity))
            phase = .fixedBody(remaining: length)
        case .chunked:
            phase = .chunkSize
        }
        if framing.expectsContinue, readIndex == p.count { return .expectContinue }
        return nil
    }

    /// Moves up to `remaining` buffered bytes into the body; returns how many are still due.
    mutating func copyBody(_ p: UnsafeBufferPointer<UInt8>, upTo remaining: Int) -> Int {
        let take = min(remaining, p.count - readIndex)
        if take > 0 {
            body.append(contentsOf: bytes(p, readIndex..<(readIndex + take)))
            consume(upTo: readIndex + take)
        }
        return remaining - take
    }

    /// Hands out the assembled request and resets for the next one.
    mutating func complete() -> HTTPRequest {
        guard var done = request else { preconditionFailure("completing without a request") }
        request = nil
        done.body = body
        body = []
        phase = .head
        headerBytes = 0
        fieldCount = 0
        leadingEmptyLines = 0
        chunkExtensionBytes = 0
        return done
    }
}

/// The request line and header section.
extension RequestParser {
    /// Consumes head lines as they complete; true once the empty line ending the head is read.
    mutating func readHead(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        while request == nil {
            guard try readRequestLine(p) else { return false }
        }
        return try readFieldLines(p, trailers: false)
    }

    /// Reads one line before the headers: an ignorable empty line or the request line.
    private mutating func readRequestLine(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        switch try scanLine(p, limit: limits.maxRequestLineBytes + 2) {
        case .needMore:
            return false
        case .tooLong:
            throw .uriTooLong(limit: limits.maxRequestLineBytes)
        case .line(let content, let next):
            consume(upTo: next)
            if content.isEmpty {
                leadingEmptyLines += 1
                if leadingEmptyLines > Self.maxLeadingEmptyLines {
                    throw .badRequest("Too many empty lines before the request line.")
                }
                return true
            }
            let line = try RequestLine.parse(bytes(p, content))
            request = HTTPRequest(
                method: line.method, target: line.target.raw, path: line.target.path,
                rawQuery: line.target.rawQuery, query: line.target.query, version: line.version)
            // Requests carry a handful of fields: one allocation instead of growing 1, 2, 4, 8.
            request?.headers.reserveCapacity(8)
            return true
        }
    }

    /// Reads header (or trailer) field lines up to the empty line; true when it is reached.
    ///
    /// Both sections share one byte budget and one field count, so trailers cannot
    /// be used to get around the header limits.
    mutating func readFieldLines(_ p: UnsafeBufferPointer<UInt8>, trailers: Bool) throws(HTTPError) -> Bool {
        while true {
            let allowance = limits.maxHeaderBytes - headerBytes
            // The final empty line is not counted, so it always fits.
            switch try scanLine(p, limit: max(allowance, 2)) {
            case .needMore:
                return false
            case .tooLong:
                throw .headersTooLarge("The header section exceeds \(limits.maxHeaderBytes) bytes.")
            case .line(let content, let next):
                consume(upTo: next)
                if content.isEmpty { return true }
                headerBytes += content.count + 2
                if headerBytes > limits.maxHeaderBytes {
                    throw .headersTooLarge("The header section exceeds \(limits.maxHeaderBytes) bytes.")
                }
                fieldCount += 1
                if fieldCount > limits.maxHeaderCount {
                    throw .headersTooLarge("More than \(limits.maxHeaderCount) header fields.")
                }
                let field = try FieldLine.parse(bytes(p, content))
                if trailers, Self.isForbiddenTrailer(field.name) { continue }
                request?.headers.add(field.name, field.value)
            }
        }
    }
}

/// Finding CRLF-terminated lines without rescanning bytes already seen.
extension RequestParser {
    enum LineScan {
        /// A complete line: its content without CRLF, and the index just past its LF.
        case line(content: Range<Int>, next: Int)
        case needMore
        /// No LF within the allowed length: the line is over its limit.
        case tooLong
    }

    /// Looks for the LF ending the line at `readIndex`, searching at most `limit` bytes
    /// (content plus CRLF) from the line start, and resuming where the last search stopped.
    ///
    /// A line must end in CRLF; a bare LF is refused rather than tolerated, because
    /// a front end that disagrees on line endings is a request smuggling vector.
    mutating func scanLine(_ p: UnsafeBufferPointer<UInt8>, limit: Int) throws(HTTPError) -> LineScan {
        let searchEnd = readIndex + min(limit, p.count - readIndex)
        if scanIndex < searchEnd, let base = p.baseAddress,
            let hit = memchr(base + scanIndex, Int32(ASCII.lf), searchEnd - scanIndex)
        {
            let lf = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            guard lf > readIndex, p[lf - 1] == ASCII.cr else {
                throw .badRequest("Lines must end with CRLF; a bare LF is not accepted.")
            }
            return .line(content: readIndex..<(lf - 1), next: lf + 1)
        }
        scanIndex = max(scanIndex, searchEnd)
        return p.count - readIndex >= limit ? .tooLong : .needMore
    }

    /// Marks everything before `index` as consumed.
    mutating func consume(upTo index: Int) {
        readIndex = index
        scanIndex = index
    }

    /// The bytes of a range of the buffer.
    func bytes(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: p[range])
    }
}

/// A parsed request line: `method SP request-target SP HTTP-version` (RFC 9112 §3).
struct RequestLine {
    var method: String
    var target: RequestTarget
    var version: HTTPVersion

    /// Parses one request line, CRLF already removed.
    ///
    /// Separators are exactly one SP each; the method is a token, the target
    /// holds visible ASCII only, and the version is `HTTP/DIGIT.DIGIT`.
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> RequestLine {
        var i = 0
        while i < line.count, ASCII.isTchar(line[i]) { i += 1 }
        guard i > 0, i < line.count, line[i] == ASCII.space else {
            throw .badRequest("The request line must start with a method token followed by one space.")
        }
        let methodEnd = i
        i += 1
        let targetStart = i
        while i < line.count, line[i] != ASCII.space {
            guard ASCII.isTargetByte(line[i]) else {
                throw .badRequest("The request target contains a forbidden character.")
            }
            i += 1
        }
        guard i > targetStart, i < line.count else {
            throw .badRequest("The request line must be `method SP target SP version`.")
        }
        let targetEnd = i
        let version = try parseVersion(UnsafeBufferPointer(rebasing: line[(i + 1)...]))
        let method = String(decoding: UnsafeBufferPointer(rebasing: line[..<methodEnd]), as: UTF8.self)
        let target = try RequestTarget.parse(
            UnsafeBufferPointer(rebasing: line[targetStart..<targetEnd]), method: method)
        return RequestLine(method: method, target: target, version: version)
    }

    /// `HTTP-version = "HTTP" "/" DIGIT "." DIGIT`, case-sensitive; a major other than 1 is 505.
    static func parseVersion(_ v: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> HTTPVersion {
        guard v.count == 8,
            v[0] == UInt8(ascii: "H"), v[1] == UInt8(ascii: "T"), v[2] == UInt8(ascii: "T"),
            v[3] == UInt8(ascii: "P"), v[4] == ASCII.slash,
            ASCII.isDigit(v[5]), v[6] == ASCII.dot, ASCII.isDigit(v[7])
        else {
            throw .badRequest("The protocol version must be `HTTP/1.1` or `HTTP/1.0`.")
        }
        let version = HTTPVersion(major: Int(v[5] - 0x30), minor: Int(v[7] - 0x30))
        guard version.major == 1 else { throw .versionNotSupported(version) }
        return version
    }
}

/// The request-target reduced to what a router needs (RFC 9112 §3.2).
struct RequestTarget {
    /// The target exactly as sent.
    var raw: String
    /// The percent-decoded path; `*` for asterisk-form, the authority for authority-form.
    var path: String
    /// The undecoded query without `?`, or nil.
    var rawQuery: String?
    /// The decoded query pairs.
    var query: [(name: String, value: String)]

    /// Recognises the four forms; `method` decides which are allowed.
    ///
    /// - origin-form `/p?q` for every method but CONNECT;
    /// - absolute-form `http://host/p?q` (http or https), reduced to path and query;
    /// - asterisk-form `*` for OPTIONS only;
    /// - authority-form `host:port` for CONNECT only.
    static func parse(_ t: UnsafeBufferPointer<UInt8>, method: String) throws(HTTPError) -> RequestTarget {
        let raw = String(decoding: t, as: UTF8.self)
        if method == "CONNECT" {
            try validateAuthorityForm(t)
            return RequestTarget(raw: raw, path: raw, rawQuery: nil, query: [])
        }
        if t[0] == ASCII.slash {
            return try pathAndQuery(t, raw: raw)
        }
        if t.count == 1, t[0] == ASCII.asterisk {
            guard method == "OPTIONS" else {
                throw .badRequest("The asterisk-form target `*` is only allowed with OPTIONS.")
            }
            return RequestTarget(raw: raw, path: "*", rawQuery: nil, query: [])
        }
        let rest = try stripAbsolutePrefix(t)
        return try pathAndQuery(rest, raw: raw)
    }

    /// Splits `path[?query]`, decoding both; an empty path (absolute-form `http://h`) becomes `/`.
    private static func pathAndQuery(_ t: UnsafeBufferPointer<UInt8>, raw: String) throws(HTTPError) -> RequestTarget {
        let q = t.firstIndex(of: ASCII.question) ?? t.count
        let pathBytes = UnsafeBufferPointer(rebasing: t[..<q])
        let path = pathBytes.isEmpty ? "/" : try PercentDecoding.path(pathBytes)
        guard q < t.count else { return RequestTarget(raw: raw, path: path, rawQuery: nil, query: []) }
        let queryBytes = UnsafeBufferPointer(rebasing: t[(q + 1)...])
        return RequestTarget(
            raw: raw, path: path, rawQuery: String(decoding: queryBytes, as: UTF8.self),
            query: try PercentDecoding.queryPairs(queryBytes))
    }

    /// Checks `scheme://authority` and returns what follows the authority.
    private static func stripAbsolutePrefix(_ t: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> UnsafeBufferPointer<UInt8> {
        let schemeLength: Int
        if hasPrefix(t, "http://") {
            schemeLength = 7
        } else if hasPrefix(t, "https://") {
            schemeLength = 8
        } else {
            throw .badRequest("The request target must be a path, an http(s) URI, `*` or host:port.")
        }
        var end = schemeLength
        while end < t.count, t[end] != ASCII.slash, t[end] != ASCII.question { end += 1 }
        let authority = UnsafeBufferPointer(rebasing: t[schemeLength..<end])
        guard !authority.isEmpty else { throw .badRequest("The absolute-form target has no host.") }
        // RFC 9110 §4.2.4: userinfo in an http(s) URI is to be treated as an error (phishing, confusion).
        guard !authority.contains(ASCII.at) else { throw .badRequest("The target must not carry userinfo.") }
        return UnsafeBufferPointer(rebasing: t[end...])
    }

    /// `authority-form = uri-host ":" port`, with a non-empty host and a numeric port.
    private static func validateAuthorityForm(_ t: UnsafeBufferPointer<UInt8>) throws(HTTPError) {
        guard let colon = t.lastIndex(of: ASCII.colon), colon > 0, colon < t.count - 1,
            t[(colon + 1)...].allSatisfy(ASCII.isDigit), t.count - colon - 1 <= 5,
            !t.contains(ASCII.slash), !t.contains(ASCII.at), !t.contains(ASCII.question)
        else {
            throw .badRequest("CONNECT needs an authority-form target `host:port`.")
        }
    }

    /// ASCII case-insensitive prefix test (schemes are case-insensitive, RFC 3986 §3.1).
    private static func hasPrefix(_ t: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        let p = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard t.count >= p.count else { return false }
        for i in 0..<p.count where ASCII.lower(t[i]) != p[i] { return false }
        return true
    }
}

/// Percent-decoding of request-target parts (RFC 3986 §2.1).
enum PercentDecoding {
    /// Decodes a path. `+` stays `+`. Invalid escapes, decoded control characters
    /// (NUL, CR, LF... which could be smuggled into logs or headers) and invalid
    /// UTF-8 are refused.
    static func path(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> String {
        // The request line only lets visible ASCII through, so without escapes there is nothing to check.
        guard bytes.contains(ASCII.percent) else { return String(decoding: bytes, as: UTF8.self) }
        let decoded = try decode(bytes, plusIsSpace: false, part: "path")
        guard !decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw .badRequest("The path contains an encoded control character.")
        }
        return try utf8(decoded, part: "path")
    }

    /// Splits a query on `&` and `=`, decoding names and values with `+` as space.
    /// Empty pairs (`a&&b`) are skipped; a name without `=` gets an empty value.
    /// Invalid escapes, an encoded NUL and invalid UTF-8 are refused.
    static func queryPairs(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != ASCII.ampersand { end += 1 }
            if end > start {
                let pair = UnsafeBufferPointer(rebasing: bytes[start..<end])
                let eq = pair.firstIndex(of: ASCII.equals) ?? pair.count
                let name = try queryComponent(UnsafeBufferPointer(rebasing: pair[..<eq]))
                let value = eq < pair.count ? try queryComponent(UnsafeBufferPointer(rebasing: pair[(eq + 1)...])) : ""
                pairs.append((name: name, value: value))
            }
            start = end + 1
        }
        return pairs
    }

    private static func queryComponent(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> String {
        let decoded = try decode(bytes, plusIsSpace: true, part: "query")
        guard !decoded.contains(0) else { throw .badRequest("The query contains an encoded NUL.") }
        return try utf8(decoded, part: "query")
    }

    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool, part: String) throws(HTTPError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == ASCII.percent {
                guard i + 2 < bytes.count, let hi = ASCII.hexValue(bytes[i + 1]), let lo = ASCII.hexValue(bytes[i + 2])
                else { throw .badRequest("The \(part) contains an invalid percent-escape.") }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(plusIsSpace && b == ASCII.plus ? ASCII.space : b)
                i += 1
            }
        }
        return out
    }

    private static func utf8(_ bytes: [UInt8], part: String) throws(HTTPError) -> String {
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw .badRequest("The decoded \(part) is not valid UTF-8.")
        }
        return s
    }
}

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

/// The header fields that decide framing and connection handling, gathered in one pass
/// over the head so that a request costs one scan rather than one per field name.
struct FramingFields {
    var hostCount = 0
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
            case 14 where HTTPHeaders.equalNames(field.name, "Content-Length"): contentLength.append(field.value)
            case 17 where HTTPHeaders.equalNames(field.name, "Transfer-Encoding"): transferEncoding.append(field.value)
            default: break
            }
        }
    }
}

/// Byte constants and character classes of the HTTP/1.1 grammar (RFC 9110 §5.6, RFC 9112).
///
/// The parser works on raw bytes; these keep the grammar readable without
/// building Strings or Characters on the hot path.
enum ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let percent: UInt8 = 0x25
    static let plus: UInt8 = 0x2B
    static let question: UInt8 = 0x3F
    static let slash: UInt8 = 0x2F
    static let asterisk: UInt8 = 0x2A
    static let hash: UInt8 = 0x23
    static let equals: UInt8 = 0x3D
    static let ampersand: UInt8 = 0x26
    static let at: UInt8 = 0x40
    static let dot: UInt8 = 0x2E

    /// `tchar` of RFC 9110 §5.6.2, as a 256-entry table so a lookup costs one load.
    static let tcharTable: [Bool] = (0..<256).map { b in
        switch UInt8(b) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(UInt8(b))
        }
    }

    @inline(__always) static func isTchar(_ b: UInt8) -> Bool { tcharTable[Int(b)] }

    /// Space or horizontal tab: optional whitespace (OWS/BWS).
    @inline(__always) static func isWhitespace(_ b: UInt8) -> Bool { b == space || b == tab }

    /// `field-vchar / SP / HTAB` (VCHAR or obs-text); everything else, CR and NUL included, is refused.
    @inline(__always) static func isFieldValueByte(_ b: UInt8) -> Bool {
        b == tab || (b >= 0x20 && b != 0x7F)
    }

    /// Bytes a request-target may hold: visible ASCII except `#` (a fragment is never sent).
    @inline(__always) static func isTargetByte(_ b: UInt8) -> Bool {
        b > 0x20 && b < 0x7F && b != hash
    }

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// The value of a hexadecimal digit, or nil.
    @inline(__always) static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    /// ASCII lower-casing of one byte.
    @inline(__always) static func lower(_ b: UInt8) -> UInt8 {
        b >= 0x41 && b <= 0x5A ? b | 0x20 : b
    }
}

/// The refusals the request parser produces.
///
/// Every parser error closes the connection: once a message is refused the
/// parser no longer knows where the next one begins (RFC 9112 §11.2), and
/// skipping a body that was never validated would reopen the door to smuggling.
extension HTTPError {
    /// 400: malformed syntax or ambiguous framing.
    static func badRequest(_ detail: String) -> HTTPError {
        HTTPError(status: 400, reason: .malformed, detail: detail)
    }

    /// 413: the body is larger than `HTTPLimits.maxBodyBytes`.
    static func payloadTooLarge(limit: Int) -> HTTPError {
        HTTPError(status: 413, reason: .bodyTooLarge, detail: "The request body exceeds \(limit) bytes.")
    }

    /// 414: the request line is longer than `HTTPLimits.maxRequestLineBytes`.
    static func uriTooLong(limit: Int) -> HTTPError {
        HTTPError(status: 414, reason: .targetTooLong, detail: "The request line exceeds \(limit) bytes.")
    }

    /// 431: the header section (or trailer section) is over a size or count limit.
    static func headersTooLarge(_ detail: String) -> HTTPError {
        HTTPError(status: 431, reason: .headersTooLarge, detail: detail)
    }

    /// 501: a transfer coding other than chunked.
    static func notImplemented(_ detail: String) -> HTTPError {
        HTTPError(status: 501, reason: .transferCodingNotImplemented, detail: detail)
    }

    /// 505: a major protocol version other than 1.
    static func versionNotSupported(_ version: HTTPVersion) -> HTTPError {
        HTTPError(
            status: 505, reason: .versionNotSupported,
            detail: "\(version) is not supported; use HTTP/1.1.")
    }
}
