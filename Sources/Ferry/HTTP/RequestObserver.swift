import FerryHTTP
import Logging

/// Wraps the responder chain: counts every request in ``RequestMetrics`` by
/// route pattern, and writes the one request log line with the request id,
/// the caller's user id and the route pattern (never the raw path, which may
/// carry ids).
///
/// It replaces the HTTP server's own access log (`accessLog = false`), which
/// cannot know the caller or the pattern. Requests the server rejects before
/// routing (malformed, too large) are not seen here.
struct RequestObserver: HTTPResponder {
    /// The label for requests no route matches, so raw paths never become series.
    static let unmatched = "(unmatched)"
    /// The changes feed, whose answered polls `ferry_changes_polls_total` counts.
    static let changesRoute = "/v1/changes"

    let router: Router
    let inner: any HTTPResponder
    let metrics: FerryMetrics
    let logger: Logger

    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        let trace = RequestTrace()
        let response = RequestTrace.$current.withValue(trace) { inner.respond(to: request, context: context) }
        let seconds = max(0, MonotonicClock.now() - context.receivedAt)
        let route = trace.route ?? pattern(of: request)
        metrics.requests.record(route: route, method: request.method, status: response.status, seconds: seconds)
        // The feed's route is fixed by the contract, so polls are counted here, not in the feed's code.
        if route == Self.changesRoute, response.status == 200 || response.status == 304 {
            metrics.changesPolls.increment()
        }
        if logger.logLevel <= .info {
            // Sized for every key up front: growing the dictionary mid-way cost more than the rest of the line.
            var metadata = Logger.Metadata(minimumCapacity: 8)
            metadata["request_id"] = .string(context.requestID)
            metadata["method"] = .string(request.method)
            metadata["route"] = .string(route)
            metadata["status"] = .stringConvertible(response.status)
            // Microsecond precision; a JSON number in json logs.
            metadata["duration_ms"] = .stringConvertible((seconds * 1_000_000).rounded() / 1000)
            metadata["remote"] = .string(context.remoteAddress)
            if let bytes = response.body.count { metadata["bytes"] = .stringConvertible(bytes) }
            if let user = trace.userID { metadata["user_id"] = .string(user) }
            logger.info("request", metadata: metadata)
        }
        return response
    }

    func runsInline(_ request: HTTPRequest) -> Bool { inner.runsInline(request) }

    private func pattern(of request: HTTPRequest) -> String {
        if case .found(let pattern, _) = router.match(method: request.method, path: request.path) { return pattern }
        return Self.unmatched
    }
}
