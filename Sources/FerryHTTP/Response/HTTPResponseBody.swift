/// The body of a response.
public enum HTTPResponseBody: Sendable {
    /// A body held in memory, sent with `Content-Length`.
    case bytes([UInt8])
    /// A body produced piece by piece on a worker thread and sent with
    /// `Transfer-Encoding: chunked` (or close-delimited to HTTP/1.0 clients).
    /// The producer is not run for HEAD requests.
    case stream(HTTPBodyProducer)

    /// No body.
    public static var empty: HTTPResponseBody { .bytes([]) }

    /// The byte count of an in-memory body, nil for a stream.
    public var count: Int? {
        if case .bytes(let bytes) = self { return bytes.count }
        return nil
    }
}

/// Writes a streamed body. Runs on a worker thread and may block; each
/// `write` may wait until the client has taken earlier data (back-pressure).
public typealias HTTPBodyProducer = @Sendable (inout HTTPBodyWriter) throws -> Void
