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
