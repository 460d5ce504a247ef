import FerryHTTP

// CORS: the policy from `cors.allowed_origins`, and the middleware that
// answers preflights and marks answers to allowed origins.

/// Answers CORS preflights for allowed origins before routing (the router
/// would answer `OPTIONS` with 405, and would ask for a token), and adds the
/// CORS response headers to every answer to an allowed origin.
///
/// A disallowed origin gets no CORS headers at all, so the browser refuses
/// to hand the response to the page; its preflight goes on to the router.
/// Paths under `sameOriginOnly` (the operator's console) answer no origin: the
/// app's allowed origins are for the app's API, and a script on one of them must
/// not read what an operator's token reads.
struct CORSResponder: Middleware {
    let policy: CORSPolicy
    var sameOriginOnly: [String] = []

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        guard !policy.isDisabled, let origin = request.headers["Origin"], !isSameOriginOnly(request) else {
            return try next(request, context)
        }
        let allowed = policy.allows(origin)
        if allowed, Self.isPreflight(request) {
            context.scope.trace?.route = "(cors-preflight)"
            return HTTPResponse(
                status: 204,
                headers: HTTPHeaders([
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

    var mayAnswerInline: Bool { !policy.isDisabled }

    func answersInline(_ request: HTTPRequest) -> Bool {
        !policy.isDisabled && Self.isPreflight(request) && request.headers["Origin"] != nil && !isSameOriginOnly(request)
    }

    /// Whether `request`'s path is under one of ``sameOriginOnly``, as the router reads it.
    private func isSameOriginOnly(_ request: HTTPRequest) -> Bool {
        sameOriginOnly.contains { Router.path(request.path, isUnder: $0) }
    }

    static func isPreflight(_ request: HTTPRequest) -> Bool {
        request.method == "OPTIONS" && request.headers["Access-Control-Request-Method"] != nil
    }
}

/// Which browser origins may call Ferry, and what a cross-origin answer says.
public struct CORSPolicy: Sendable, Equatable {
    /// Methods a preflight allows.
    public static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
    /// Request headers a preflight allows: auth, JSON bodies, preconditions, idempotency, tracing.
    public static let allowedHeaders =
        "Authorization, Content-Type, Content-Encoding, If-Match, If-None-Match, If-Modified-Since, Idempotency-Key, X-Request-Id"
    /// Response headers a sync client needs to read from script.
    public static let exposedHeaders =
        "ETag, Link, Location, Last-Modified, Retry-After, Idempotent-Replayed, X-Request-Id, WWW-Authenticate"
    /// How long a browser may cache a preflight answer, in seconds.
    public static let maxAgeSeconds = 600

    private let origins: Set<String>
    private let anyOrigin: Bool

    /// A policy from `cors.allowed_origins`: exact origins such as
    /// `https://app.example.com`, or `*` for any origin. Empty allows none.
    public init(allowedOrigins: [String]) {
        origins = Set(allowedOrigins.map(Self.normalize))
        anyOrigin = allowedOrigins.contains("*")
    }

    /// Whether no origin is allowed (CORS is off).
    public var isDisabled: Bool { origins.isEmpty }

    /// Whether `origin` (an `Origin` header value) may call the API.
    public func allows(_ origin: String) -> Bool {
        anyOrigin || origins.contains(Self.normalize(origin))
    }

    /// The `Access-Control-Allow-Origin` value for an allowed origin. Bearer
    /// tokens are not cookies, so `*` is safe when configured; otherwise the
    /// origin is echoed (with `Vary: Origin`).
    func allowOriginValue(for origin: String) -> String { anyOrigin ? "*" : origin }

    /// Scheme and host compare case-insensitively, and a trailing slash is not part of an origin.
    static func normalize(_ origin: String) -> String {
        var value = origin.lowercased()
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }
}
