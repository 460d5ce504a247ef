import FerryHTTP

/// A contract error: the status, the stable `code`, and any extra members
/// (`current`, `errors`, ...). Thrown anywhere in the Ferry layer and turned
/// into an `application/problem+json` response at the edge.
public struct Problem: Error, Sendable {
    /// The HTTP status.
    public var status: Int
    /// The contract's machine-readable code.
    public var code: String
    /// A human-readable explanation.
    public var detail: String?
    /// Extra members, in order.
    public var extra: [(String, JSONValue)]
    /// Extra response headers (`Retry-After`, `WWW-Authenticate`, `Allow`).
    public var headers: HTTPHeaders

    /// A problem with all its parts.
    public init(
        _ status: Int, _ code: String, _ detail: String? = nil, extra: [(String, JSONValue)] = [],
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra
        self.headers = headers
    }

    /// The response that carries it.
    public var response: HTTPResponse {
        .problem(status: status, code: code, detail: detail, extra: extra, headers: headers)
    }
}

extension Problem {
    /// 401 with `WWW-Authenticate: Bearer`, the same for every kind of bad token.
    public static func unauthorized(_ detail: String = "a valid bearer token is required") -> Problem {
        Problem(401, "unauthorized", detail, headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
    }

    /// 503 `unavailable` with `Retry-After`: temporary, the client retries.
    public static func unavailable(_ detail: String, retryAfter seconds: Int = 1) -> Problem {
        Problem(503, "unavailable", detail, headers: HTTPHeaders([("Retry-After", String(seconds))]))
    }

    /// 400 `bad_request`.
    public static func badRequest(_ detail: String) -> Problem { Problem(400, "bad_request", detail) }

    /// 404 `not_found`.
    public static func notFound(_ detail: String = "no such resource or row") -> Problem { Problem(404, "not_found", detail) }
}
