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
