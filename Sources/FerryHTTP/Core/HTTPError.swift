/// A request that must be refused, with why and what to tell the client.
///
/// The parser produces one for every framing or size violation, the router for
/// an unknown path or method, and handlers may throw one. The server turns it
/// into a response through ``HTTPServerConfiguration/refusal`` (by default an
/// RFC 9457 problem) and, when `closeConnection` is set, closes the connection
/// after it, because the byte stream can no longer be trusted to delimit the
/// next request (RFC 9112 §11.2).
public struct HTTPError: Error, Sendable, Equatable {
    /// Why the request was refused, for an application that answers each reason
    /// in its own words (a problem type, an error code).
    public enum Reason: Sendable, Equatable {
        /// Malformed syntax or ambiguous framing (400).
        case malformed
        /// The body is over `HTTPLimits.maxBodyBytes`, as sent or as decoded (413).
        case bodyTooLarge
        /// The request line is over `HTTPLimits.maxRequestLineBytes` (414).
        case targetTooLong
        /// The header or trailer section is over a size or count limit (431).
        case headersTooLarge
        /// A transfer coding other than chunked (501).
        case transferCodingNotImplemented
        /// A major protocol version other than 1 (505).
        case versionNotSupported
        /// The client was too slow to send its request (408).
        case requestTimeout
        /// The server holds as many connections as it may (503).
        case tooManyConnections
        /// No route matches the path (404).
        case routeNotFound
        /// A route matches the path but not the method (405; `headers` has `Allow`).
        case methodNotAllowed
        /// A `Content-Encoding` the server does not decode (415).
        case contentCodingUnsupported
        /// A coded body that does not decode (400).
        case contentCodingCorrupt
        /// A handler failed with an error that is not an `HTTPError` (500).
        case handlerFailed
        /// Any other refusal, said by its status alone: what a handler throws.
        case other
    }

    /// The status to answer, e.g. 400, 413, 414, 431, 501, 505.
    public var status: Int
    public var reason: Reason
    /// A human-readable explanation for the problem's `detail`.
    public var detail: String
    /// Header fields the answer carries, such as `Allow` or `Retry-After`.
    public var headers: HTTPHeaders
    /// Whether the connection must close after the answer.
    public var closeConnection: Bool

    /// An error with all its parts; framing errors close by default.
    public init(
        status: Int, reason: Reason = .other, detail: String, headers: HTTPHeaders = HTTPHeaders(),
        closeConnection: Bool = true
    ) {
        self.status = status
        self.reason = reason
        self.detail = detail
        self.headers = headers
        self.closeConnection = closeConnection
    }
}
