import FerryHTTP

/// Answers CORS preflights for allowed origins before routing (the router
/// would answer `OPTIONS` with 405, and would ask for a token), and adds the
/// CORS response headers to every answer to an allowed origin.
///
/// A disallowed origin gets no CORS headers at all, so the browser refuses
/// to hand the response to the page; its preflight goes on to the router.
struct CORSResponder: Middleware {
    let policy: CORSPolicy

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        guard !policy.isDisabled, let origin = request.headers["Origin"] else {
            return try next(request, context)
        }
        let allowed = policy.allows(origin)
        if allowed, Self.isPreflight(request) {
            context.scope.trace?.route = "(cors-preflight)"
            return HTTPResponse(status: 204, headers: HTTPHeaders([
                ("Access-Control-Allow-Origin", policy.allowOriginValue(for: origin)),
                ("Access-Control-Allow-Methods", CORSPolicy.allowedMethods),
                ("Access-Control-Allow-Headers", CORSPolicy.allowedHeaders),
                ("Access-Control-Max-Age", String(CORSPolicy.maxAgeSeconds)),
                ("Vary", "Origin"),
            ]))
        }
        var response = try next(request, context)
        // Caches must not hand one origin's answer to another.
        response.headers.add("Vary", "Origin")
        if allowed {
            response.headers.replace("Access-Control-Allow-Origin", policy.allowOriginValue(for: origin))
            response.headers.replace("Access-Control-Expose-Headers", CORSPolicy.exposedHeaders)
        }
        return response
    }

    func answersInline(_ request: HTTPRequest) -> Bool {
        !policy.isDisabled && Self.isPreflight(request) && request.headers["Origin"] != nil
    }

    static func isPreflight(_ request: HTTPRequest) -> Bool {
        request.method == "OPTIONS" && request.headers["Access-Control-Request-Method"] != nil
    }
}
