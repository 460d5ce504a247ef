import FerryHTTP
import Logging

/// Puts ``ConsoleSecurityHeaders`` on every answer under `/console`, and
/// `Cache-Control: no-store` on every answer of its API, whatever produced it:
/// a handler's answer, a problem it threw, or the router's own 404 and 405.
///
/// A middleware step rather than a wrapper around each console handler,
/// because a wrapper sees only what a handler returns: the problems it throws
/// (401, 400, 403, 404, 422, 429) and the router's refusals went out bare
/// (issue 48), though docs/CONSOLE.md promises the headers on every answer.
struct ConsoleHeadersResponder: Middleware {
    let logger: Logger

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        guard Self.covers(request.path) else { return try next(request, context) }
        var response: HTTPResponse
        do {
            response = try next(request, context)
        } catch {
            response = Problem.answer(for: error, context: context, logger: logger)
        }
        for (name, value) in ConsoleSecurityHeaders.all { response.headers.replace(name, value) }
        if Self.isAPI(request.path) { response.headers.replace("Cache-Control", "no-store") }
        return response
    }

    /// `/console` and everything under it, as the router reads a path (`//console/` too).
    static func covers(_ path: String) -> Bool {
        Router.path(path, isUnder: ConsoleRoutes.prefix)
    }

    static func isAPI(_ path: String) -> Bool {
        Router.path(path, isUnder: ConsoleRoutes.api)
    }
}
