// What a handler returns: the `HTTPResponse` value, its `HTTPResponseBody`
// (bytes or a stream producer), the problem+json responses (`HTTPRefusal`
// included), and `HTTPStatus`, the reason phrases and the statuses that forbid
// a body. The bytes on the wire are written by ResponseSerializer.swift.

/// A response a handler returns: status, header fields and a body.
///
/// The server adds the framing (`Content-Length` or chunked), `Date`,
/// `Server`, `X-Request-Id` and `Connection` fields itself; a handler's own
/// values for those are replaced.
public struct HTTPResponse: Sendable {
    /// The status code, e.g. 200.
    public var status: Int
    /// Header fields in the order they will be written.
    public var headers: HTTPHeaders
    /// The body: bytes in memory, or a stream written chunk by chunk.
    public var body: HTTPResponseBody

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: HTTPResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), bytes: [UInt8]) {
        self.init(status: status, headers: headers, body: .bytes(bytes))
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]),
            bytes: Array(text.utf8))
    }

    /// An `application/json` response from already-encoded JSON bytes.
    public static func json(_ bytes: [UInt8], status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.replace("Content-Type", "application/json")
        return HTTPResponse(status: status, headers: headers, bytes: bytes)
    }
}

public enum HTTPResponseBody: Sendable {
    /// A body held in memory, sent with `Content-Length`.
    case bytes([UInt8])
    /// A body produced piece by piece on a worker thread and sent with
    /// `Transfer-Encoding: chunked` (or close-delimited to HTTP/1.0 clients).
    /// The producer is not run for HEAD requests.
    case stream(HTTPBodyProducer)
    /// Not yet: the exchange waits on the event loop, without a thread, and
    /// the responder is called again later (``HTTPParking``).
    case parked(HTTPParking)

    public static var empty: HTTPResponseBody { .bytes([]) }

    /// The byte count of an in-memory body, nil for a stream.
    public var count: Int? {
        if case .bytes(let bytes) = self { return bytes.count }
        return nil
    }

    /// The whole body in memory, a stream run to its end on the calling
    /// thread; nil for a parked exchange, which has no body yet. For callers
    /// that answer in process rather than on a socket (a router-level test).
    public func collected() throws -> [UInt8]? {
        switch self {
        case .bytes(let bytes):
            return bytes
        case .stream(let producer):
            var collected: [UInt8] = []
            var writer = HTTPBodyWriter(chunked: false) { collected += $0 }
            try producer(&writer)
            try writer.finish()
            return collected
        case .parked:
            return nil
        }
    }
}

/// Writes a streamed body. Runs on a worker thread and may block; each
/// `write` may wait until the client has taken earlier data (back-pressure).
public typealias HTTPBodyProducer = @Sendable (inout HTTPBodyWriter) throws -> Void

/// Turns a refusal into the response the client gets: the server's own refusals
/// (parser, timeouts, connection cap), the router's 404 and 405, and whatever a
/// handler throws. An application sets one to add its own members.
public typealias HTTPRefusal = @Sendable (HTTPError) -> HTTPResponse

/// Reason phrases for status lines and problem titles.
public enum HTTPStatus {
    /// The standard reason phrase of a status code, or `Status` for an unknown one.
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }

    /// Whether a response with this status never has a body (RFC 9110 §6.4.1).
    static func forbidsBody(_ status: Int) -> Bool {
        status < 200 || status == 204 || status == 304
    }
}

extension HTTPResponse {
    /// An RFC 9457 problem response: `{"type","title","status","detail",...}` as
    /// `application/problem+json`.
    ///
    /// - Parameters:
    ///   - status: The HTTP status, repeated in the body.
    ///   - title: A short summary; the status's reason phrase when nil.
    ///   - detail: An explanation of this occurrence; omitted when nil.
    ///   - type: The problem type URI; `about:blank` by default.
    ///   - extensions: Further members, in order, written after `status` and before
    ///     `detail` (RFC 9457 §3.2); a name the problem writes itself is dropped.
    ///   - headers: Extra header fields, e.g. `Allow` or `Retry-After`.
    public static func problem(
        status: Int, title: String? = nil, detail: String? = nil, type: String = "about:blank",
        extensions: [(String, JSONValue)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var members: [(String, JSONValue)] = [
            ("type", .string(type)),
            ("title", .string(title ?? HTTPStatus.reasonPhrase(status))),
            ("status", .int(status)),
        ]
        let own: Set<String> = detail == nil ? ["type", "title", "status"] : ["type", "title", "status", "detail"]
        members.append(contentsOf: extensions.filter { !own.contains($0.0) })
        if let detail { members.append(("detail", .string(detail))) }
        var headers = headers
        headers.replace("Content-Type", "application/problem+json")
        return HTTPResponse(status: status, headers: headers, bytes: JSONValue.object(members).bytes)
    }

    /// The plain problem response for a refused request: its status, detail and headers.
    public static func problem(_ error: HTTPError) -> HTTPResponse {
        problem(status: error.status, detail: error.detail, headers: error.headers)
    }
}
