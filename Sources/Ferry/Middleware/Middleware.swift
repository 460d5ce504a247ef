import FerryHTTP
import Logging

// How a request passes through Ferry's layers: the middleware protocol and
// the chain that routes once and runs it, and the per-route handling of the
// writes. The request's scope (caller, transaction, trace), which every step is
// handed, is in Scope/.

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

    /// Whether ``answersInline(_:)`` can ever say yes; read once, when the chain is built.
    var mayAnswerInline: Bool { get }
}

extension Middleware {
    typealias Next = (HTTPRequest, RequestContext) throws -> HTTPResponse

    func answersInline(_ request: HTTPRequest) -> Bool { false }

    var mayAnswerInline: Bool { false }
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

    /// The steps that may answer a request on the I/O thread, picked once.
    private let inlineAnswerers: [any Middleware]

    init(middleware: [any Middleware], router: Router, logger: Logger) {
        self.middleware = middleware
        self.router = router
        self.logger = logger
        inlineAnswerers = middleware.filter(\.mayAnswerInline)
    }

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
        inlineAnswerers.contains { $0.answersInline(request) } || router.runsInline(request)
    }
}

/// Turns a Ferry handler, which throws ``Problem``s and database errors, into
/// a router handler that always answers, through the one error mapping
/// (``Problem/answer(for:context:logger:)``).
///
/// With ``writeHooks`` set, every POST, PUT, PATCH and DELETE also goes
/// through them (idempotency keys, computed ranks) around the handler. They
/// sit here, per route, rather than in ``MiddlewareChain``, because a batch
/// replays its operations through the routes: each operation's computed
/// ranks must be placed, and the batch's own key covers them all.
struct RouteHandling: Sendable {
    typealias Handler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse

    let logger: Logger
    /// What wraps the writes, outermost first; empty for routes that take none of it (sign-in).
    var writeHooks: [any Middleware]

    init(logger: Logger, writeHooks: [any Middleware] = []) {
        self.logger = logger
        self.writeHooks = writeHooks
    }

    /// The methods that are writes.
    static let writeMethods: Set<String> = ["POST", "PUT", "PATCH", "DELETE"]

    /// The same handling with `hooks` around the writes.
    func with(_ hooks: [any Middleware]) -> RouteHandling { RouteHandling(logger: logger, writeHooks: hooks) }

    func callAsFunction(_ handler: @escaping Handler) -> Handler {
        let handling = self
        return { request, context in
            do {
                guard !handling.writeHooks.isEmpty, Self.writeMethods.contains(request.method) else {
                    return try handler(request, context)
                }
                return try handling.writeHooks.run(request, context) { request, context in
                    // A hook reads the status of what it wrapped (to store it, or to roll back),
                    // so the handler's problems become answers before they reach it.
                    do { return try handler(request, context) } catch {
                        return Problem.answer(for: error, context: context, logger: handling.logger)
                    }
                }
            } catch {
                return Problem.answer(for: error, context: context, logger: handling.logger)
            }
        }
    }
}
