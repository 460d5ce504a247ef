import FerryHTTP
import Logging

/// Wraps the responder chain: counts every request in ``RequestMetrics`` by
/// route pattern, and writes the one request log line with the request id,
/// the caller's user id and the route pattern (never the raw path, which may
/// carry ids); at info, except for health probes, whose lines go at debug.
///
/// It replaces the HTTP server's own access log (`accessLog = false`), which
/// cannot know the caller or the pattern. Requests the server rejects before
/// routing (malformed, too large) are not seen here: the server writes their
/// `request refused` lines itself (`EventLoop.refuse`). The pattern comes from
/// the context, where ``MiddlewareChain`` put it: there is no second router.
struct RequestObserver: Middleware {
    /// The label for requests no route matches, so raw paths never become series.
    static let unmatched = "(unmatched)"
    /// The changes feed, whose answered polls `ferry_changes_polls_total` counts.
    static let changesRoute = "/v1/changes"

    let metrics: FerryMetrics
    let log: FieldLogger

    /// The routes whose lines go at debug: the probes (``ProbeRoute``).
    let quietRoutes: [String]

    init(metrics: FerryMetrics, logger: Logger, quietRoutes: [String] = ProbeRoute.all) {
        self.quietRoutes = quietRoutes
        self.metrics = metrics
        log = FieldLogger(logger)
    }

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        let response = try next(request, context)
        // A parked exchange's passes are not answers: its line is written once, when it
        // is answered, or when its stream starts; a stream's later parts write none.
        if context.resumption?.streaming == true { return response }
        if case .parked(let parking) = response.body, parking.stream == nil || context.resumption != nil { return response }
        let seconds = max(0, MonotonicClock.now() - context.receivedAt)
        let trace = context.scope.trace
        let route = trace?.route ?? context.routePattern ?? Self.unmatched
        metrics.requests.record(route: route, method: request.method, status: response.status, seconds: seconds)
        // The feed's route is fixed by the contract, so polls are counted here, not in the feed's code.
        if route == Self.changesRoute, response.status == 200 || response.status == 304 {
            metrics.changesPolls.increment()
        }
        // Health probes arrive every few seconds from each balancer and orchestrator and
        // would be most of the log: their lines go at debug (as Rails 8 silences its
        // health check). Metrics still count them.
        let level: Logger.Level = quietRoutes.contains(route) ? .debug : .info
        if log.isEnabled(level) {
            // Ordered fields, not a metadata dictionary: hashing and sorting eight keys per
            // request cost more than the rest of the line. Keys in sorted order, as metadata prints.
            var fields: [LogField] = []
            fields.reserveCapacity(8)
            if let bytes = response.body.count { fields.append(LogField("bytes", .int(bytes))) }
            // Microsecond precision, written in milliseconds; a JSON number in json logs.
            fields.append(LogField("duration_ms", .thousandths(Int((seconds * 1_000_000).rounded()))))
            fields.append(LogField("method", .string(request.method)))
            fields.append(LogField("remote", .string(context.remoteAddress)))
            fields.append(LogField("request_id", .string(context.requestID)))
            fields.append(LogField("route", .string(route)))
            fields.append(LogField("status", .int(response.status)))
            if let user = trace?.userID { fields.append(LogField("user_id", .string(user))) }
            log.log(level: level, "request", fields: fields)
        }
        return response
    }
}
