/// Answers requests; the seam between the server and whatever serves.
public protocol HTTPResponder: Sendable {
    /// Called on a worker thread, never on an I/O thread: it may block (libpq calls happen here).
    /// When `runsInline` says true for this request it is called on the I/O thread instead.
    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse

    /// Whether this request may be answered directly on the I/O thread.
    /// Only for handlers that never block and finish in microseconds
    /// (e.g. `/healthz`); it saves two thread hand-offs. Default: false.
    func runsInline(_ request: HTTPRequest) -> Bool
}

extension HTTPResponder {
    /// Handlers run on the worker pool unless they say otherwise.
    public func runsInline(_ request: HTTPRequest) -> Bool { false }
}

/// An `HTTPResponder` made from a closure.
public struct ClosureResponder: HTTPResponder {
    private let body: @Sendable (HTTPRequest, RequestContext) -> HTTPResponse
    private let inline: Bool

    /// A responder calling `body` for every request; `inline` as in `runsInline`.
    public init(inline: Bool = false, _ body: @escaping @Sendable (HTTPRequest, RequestContext) -> HTTPResponse) {
        self.body = body
        self.inline = inline
    }

    public func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        body(request, context)
    }

    public func runsInline(_ request: HTTPRequest) -> Bool { inline }
}
