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
    /// The limits this parser enforces.
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

    /// A parser with nothing buffered.
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
