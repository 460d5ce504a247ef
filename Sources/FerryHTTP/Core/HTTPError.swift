/// A request that must be refused, with the answer it gets.
///
/// Thrown or returned by the parser for every framing or size violation; the
/// server turns it into a problem+json response and, when `closeConnection`
/// is set, closes the connection after it, because the byte stream can no
/// longer be trusted to delimit the next request (RFC 9112 §11.2).
public struct HTTPError: Error, Sendable, Equatable {
    /// The status to answer, e.g. 400, 413, 414, 431, 501, 505.
    public var status: Int
    /// A stable machine-readable code, e.g. `bad_request`, `payload_too_large`.
    public var code: String
    /// A human-readable explanation for the problem's `detail`.
    public var detail: String
    /// Whether the connection must close after the answer.
    public var closeConnection: Bool

    /// An error with all its parts; framing errors close by default.
    public init(status: Int, code: String, detail: String, closeConnection: Bool = true) {
        self.status = status
        self.code = code
        self.detail = detail
        self.closeConnection = closeConnection
    }
}
