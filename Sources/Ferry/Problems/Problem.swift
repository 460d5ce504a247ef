import FerryHTTP
import FerryPostgres
import Logging

/// A contract error: the status, the stable `code`, and any extra members
/// (`current`, `errors`, ...). Thrown anywhere in the Ferry layer and turned
/// into an `application/problem+json` response at the edge.
public struct Problem: Error, Sendable {
    public var status: Int
    /// The contract's machine-readable code.
    public var code: ProblemCode
    /// A human-readable explanation.
    public var detail: String?
    /// Extra members, in order.
    public var extra: [(String, JSONValue)]
    /// Extra response headers (`Retry-After`, `WWW-Authenticate`, `Allow`).
    public var headers: HTTPHeaders

    public init(
        _ status: Int, _ code: ProblemCode, _ detail: String? = nil, extra: [(String, JSONValue)] = [],
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.status = status
        self.code = code
        self.detail = detail
        self.extra = extra
        self.headers = headers
    }

    public var response: HTTPResponse {
        .problem(status: status, code: code, detail: detail, extra: extra, headers: headers)
    }
}

extension Problem: CustomStringConvertible {
    /// `503 unavailable: the database is unavailable`, as a log line shows it (the
    /// synthesized form dumped every member's type).
    public var description: String { "\(status) \(code.rawValue)\(detail.map { ": \($0)" } ?? "")" }
}

extension Problem {
    /// 401 with `WWW-Authenticate: Bearer`, the same for every kind of bad token.
    public static func unauthorized(_ detail: String = "a valid bearer token is required") -> Problem {
        Problem(401, .unauthorized, detail, headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
    }

    /// 503 `unavailable` with `Retry-After`: temporary, the client retries.
    public static func unavailable(_ detail: String, retryAfter seconds: Int = 1) -> Problem {
        Problem(503, .unavailable, detail, headers: HTTPHeaders([("Retry-After", String(seconds))]))
    }

    /// 400 `bad_request`.
    public static func badRequest(_ detail: String) -> Problem { Problem(400, .badRequest, detail) }

    /// 404 `not_found`.
    public static func notFound(_ detail: String = "no such resource or row") -> Problem { Problem(404, .notFound, detail) }
}

extension Problem {
    /// The contract's problem for a refusal of the HTTP layer's: its status, detail
    /// and headers, with the code the contract gives its reason.
    public init(refusal error: HTTPError) {
        self.init(error.status, Self.code(for: error), error.detail, headers: error.headers)
    }

    /// The server's and the router's refusals, answered as contract problems.
    public static let refusal: HTTPRefusal = { Problem(refusal: $0).response }

    private static func code(for error: HTTPError) -> ProblemCode {
        switch error.reason {
        case .malformed, .contentCodingCorrupt: .badRequest
        case .bodyTooLarge: .payloadTooLarge
        case .targetTooLong: .uriTooLong
        case .headersTooLarge: .headersTooLarge
        case .transferCodingNotImplemented: .notImplemented
        case .versionNotSupported: .httpVersionNotSupported
        case .requestTimeout: .requestTimeout
        case .tooManyConnections: .unavailable
        case .routeNotFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .contentCodingUnsupported: .unsupportedContentEncoding
        case .handlerFailed: .internalError
        case .other:
            switch error.status {
            case 400: .badRequest
            case 404: .notFound
            case 405: .methodNotAllowed
            case 413: .payloadTooLarge
            case 503: .unavailable
            case 500...: .internalError
            default: .badRequest
            }
        }
    }
}

extension HTTPResponse {
    /// A problem response with the contract's `code` member, after `status`:
    /// `{"type","title","status","code","detail",...extra}`.
    ///
    /// - Parameters:
    ///   - code: The contract's stable machine-readable code, e.g. `not_found`.
    ///   - extra: Further members in order, e.g. `("current", .raw(rowJSON))`.
    public static func problem(
        status: Int, code: ProblemCode, title: String? = nil, detail: String? = nil,
        type: String = "about:blank", extra: [(String, JSONValue)] = [], headers: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var members: [(String, JSONValue)] = [("code", .string(code.rawValue))]
        if let detail { members.append(("detail", .string(detail))) }
        members.append(contentsOf: extra.filter { $0.0 != "code" && $0.0 != "detail" })
        // An error is about this moment: no cache or proxy may keep it and answer it again.
        var headers = headers
        if !headers.contains("Cache-Control") { headers.add("Cache-Control", "no-store") }
        return problem(status: status, title: title, type: type, extensions: members, headers: headers)
    }
}
