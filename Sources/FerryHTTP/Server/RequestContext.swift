import Logging

/// What a handler knows about a request besides the request itself.
public struct RequestContext: Sendable {
    /// The request id: the client's `X-Request-Id` when it was safe, else a generated one.
    /// It is echoed in the response.
    public var requestID: String
    /// The peer's address, `ip:port` (IPv6 as `[ip]:port`).
    public var remoteAddress: String
    /// The matched route pattern, e.g. `/v1/:resource/:id`; set by `Router`.
    public var routePattern: String?
    /// The route's parameters; set by `Router`.
    public var parameters: RouteParameters
    /// Monotonic seconds when the request was complete (for durations).
    public var receivedAt: Double
    /// Whatever the application's own layers hand each other about this
    /// request (who the caller is, what to log), carried here so that it shows
    /// in every handler's signature instead of travelling in task-locals. The
    /// HTTP layer never reads it.
    public var attachment: (any Sendable)?
    private let baseLogger: Logger

    /// A context; the server makes these.
    public init(
        requestID: String, remoteAddress: String, logger: Logger, routePattern: String? = nil,
        parameters: RouteParameters = RouteParameters(), receivedAt: Double = MonotonicClock.now()
    ) {
        self.requestID = requestID
        self.remoteAddress = remoteAddress
        self.baseLogger = logger
        self.routePattern = routePattern
        self.parameters = parameters
        self.receivedAt = receivedAt
    }

    /// A logger whose lines carry this request's id. Built on use, so that
    /// requests that log nothing pay nothing for it.
    public var logger: Logger {
        var logger = baseLogger
        logger[metadataKey: "request_id"] = .string(requestID)
        return logger
    }
}
