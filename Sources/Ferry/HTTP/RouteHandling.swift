import FerryHTTP
import FerryPostgres
import Logging

/// Turns a Ferry handler, which throws ``Problem``s and database errors, into
/// a router handler that always answers: a Problem becomes its problem+json,
/// anything unexpected a logged 500 that reveals nothing.
///
/// With ``writeHooks`` set, every POST, PUT, PATCH and DELETE also goes
/// through them (idempotency keys, computed ranks) around the handler.
struct RouteHandling: Sendable {
    typealias Handler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

    let logger: Logger
    /// What wraps the writes; nil for routes that take none of it (sign-in).
    var writeHooks: WriteHooks?

    init(logger: Logger, writeHooks: WriteHooks? = nil) {
        self.logger = logger
        self.writeHooks = writeHooks
    }

    /// `handler` that only labels the request with its route pattern, for the
    /// operational routes (health, readiness, metrics, OpenAPI) that need none
    /// of the error mapping: the request observer then need not route again.
    static func labelled(_ handler: @escaping Handler) -> Handler {
        { request, context in
            if let pattern = context.routePattern { context.scope.trace?.routeIfUnset(pattern) }
            return try handler(request, context)
        }
    }

    /// The same handling with `hooks` around the writes.
    func with(_ hooks: WriteHooks) -> RouteHandling { RouteHandling(logger: logger, writeHooks: hooks) }

    func callAsFunction(_ handler: @escaping Handler) -> Handler {
        let handling = self
        return { request, context in
            // The observer labels the request with this pattern instead of routing it again.
            if let pattern = context.routePattern { context.scope.trace?.routeIfUnset(pattern) }
            let run = { (request: HTTPRequest, context: RequestContext) in handling.answer(context) { try handler(request, context) } }
            guard let hooks = handling.writeHooks, WriteHooks.methods.contains(request.method) else { return run(request, context) }
            return handling.answer(context) { try hooks.respond(request, context, next: run) }
        }
    }

    /// The answer of `body`, with its errors turned into problems.
    func answer(_ context: RequestContext, _ body: () throws -> HTTPResponse) -> HTTPResponse {
        do {
            return try body()
        } catch let problem as Problem {
            return problem.response
        } catch let error as HTTPError {
            return Problem(refusal: error).response
        } catch let error as PostgresError {
            logger.error("unmapped database error", metadata: [
                "request_id": "\(context.requestID)", "sqlstate": "\(error.sqlState ?? "-")",
                "error": "\(error.message)",
            ])
            return Problem(500, "internal_error", "the server failed; the request id is \(context.requestID)").response
        } catch {
            logger.error("unhandled error", metadata: ["request_id": "\(context.requestID)", "error": "\(error)"])
            return Problem(500, "internal_error", "the server failed; the request id is \(context.requestID)").response
        }
    }
}
