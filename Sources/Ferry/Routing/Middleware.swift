import FerryHTTP
import Logging

/// A step around the route handlers: the request observer, compact JSON and
/// CORS around every route (``MiddlewareChain``); the `Idempotency-Key` and
/// rank rules around the writes (``RouteHandling``). One protocol for both.
protocol Middleware: Sendable {
    /// The answer to `request`: `next`'s (the rest of the chain and the
    /// handler), as it is or changed, or one of its own. What it throws is
    /// answered by ``Problem/answer(for:context:logger:)``.
    func respond(to request: HTTPRequest, context: RequestContext, next: Middleware.Next) throws -> HTTPResponse

    /// Whether this step answers `request` itself without blocking, so that
    /// the I/O thread may run it (a CORS preflight).
    func answersInline(_ request: HTTPRequest) -> Bool
}

extension Middleware {
    typealias Next = (HTTPRequest, RequestContext) throws -> HTTPResponse

    func answersInline(_ request: HTTPRequest) -> Bool { false }
}

extension [any Middleware] {
    /// `handler`'s answer with these steps around it, the first outermost.
    func run(
        _ request: HTTPRequest, _ context: RequestContext, from index: Int = 0,
        handler: (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        guard index < count else { return try handler(request, context) }
        return try self[index].respond(to: request, context: context) { request, context in
            try run(request, context, from: index + 1, handler: handler)
        }
    }
}

/// Ferry's responder: routes each request once, puts the pattern, the
/// parameters and a fresh ``RequestScope`` into its context, and runs the
/// middleware around the route's handler. Whatever a step throws becomes
/// problem+json here, the one place besides ``RouteHandling`` (which uses the
/// same mapping) where an error turns into an answer.
struct MiddlewareChain: HTTPResponder {
    let middleware: [any Middleware]
    let router: Router
    let logger: Logger

    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        let routed = router.route(request)
        var context = context
        context.routePattern = routed.pattern
        context.parameters = routed.parameters
        context.scope = RequestScope(trace: RequestTrace())
        do {
            return try middleware.run(request, context) { request, context in
                router.respond(to: request, context: context, routed: routed)
            }
        } catch {
            return Problem.answer(for: error, context: context, logger: logger)
        }
    }

    func runsInline(_ request: HTTPRequest) -> Bool {
        middleware.contains { $0.answersInline(request) } || router.runsInline(request)
    }
}
