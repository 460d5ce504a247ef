import FerryHTTP
import Logging

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
