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

    /// A response from its parts.
    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: HTTPResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is the given bytes.
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
