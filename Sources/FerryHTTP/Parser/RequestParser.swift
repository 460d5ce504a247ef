// The incremental HTTP/1.1 request parser (RFC 9112): its buffer, the events it
// reports, the phases that turn bytes into them, and line scanning. The grammar's
// parts are beside it: the request line (RequestLine.swift: the line, the target,
// percent-decoding), the header fields and the framing they decide
// (HeadFields.swift), the byte classes (ASCII.swift), the refusals
// (HTTPError+Parser.swift) and the chunked coding (RequestParser+Chunked.swift).

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
