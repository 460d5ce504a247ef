import FerryBase
import FerryHTTP

/// Who a request runs as, and where its database work goes: the hash of its
/// bearer token, the trace that learns the user id for the log line, and the
/// transaction it joins when one is open (a batch, an `Idempotency-Key`
/// write, a computed rank). Handed to ``Database/asCaller(_:_:)`` explicitly.
struct Caller: Sendable {
    /// SHA-256 of the bearer token (``BearerToken/hash(_:)``), never the token.
    let tokenHash: String
    let trace: RequestTrace?
    let transaction: CallerTransaction?

    /// The hash of the request's bearer token; 401 when there is none.
    static func tokenHash(_ request: HTTPRequest) throws -> String {
        guard let token = BearerToken.from(request) else { throw Problem.unauthorized() }
        return BearerToken.hash(token)
    }
}

/// What Ferry's layers know of the request being answered beyond HTTP. It
/// rides in ``RequestContext/attachment``, set by the outermost middleware,
/// so every handler's signature carries it.
struct RequestScope: Sendable {
    /// Facts learned deep in the handler (the user, a route label) for the
    /// request log line; nil outside the server's middleware (tests, batch probes).
    var trace: RequestTrace?
    /// The caller's transaction the request's statements join, if one is open.
    var transaction: CallerTransaction?

    /// The caller `tokenHash` identifies, in this scope.
    func caller(_ tokenHash: String) -> Caller { Caller(tokenHash: tokenHash, trace: trace, transaction: transaction) }
}

extension RequestContext {
    /// Ferry's scope of this request (empty when no middleware set one).
    var scope: RequestScope {
        get { attachment as? RequestScope ?? RequestScope() }
        set { attachment = newValue }
    }

    /// The caller `tokenHash` identifies, in this request's scope.
    func caller(_ tokenHash: String) -> Caller { scope.caller(tokenHash) }
}

/// Facts about the request being answered that only code deep inside the
/// handler learns (who the caller is), handed back to the request observer
/// for the request log line. It travels in the request's ``RequestScope``.
public final class RequestTrace: Sendable {
    private struct Facts {
        var userID: String?
        var route: String?
    }

    private let facts = Locked(Facts())

    /// An empty trace.
    public init() {}

    /// The authenticated caller, once the token has been checked.
    public var userID: String? {
        get { facts.withLock { $0.userID } }
        set { facts.withLock { $0.userID = newValue } }
    }

    /// A route label that overrides the router's pattern (e.g. a CORS preflight).
    public var route: String? {
        get { facts.withLock { $0.route } }
        set { facts.withLock { $0.route = newValue } }
    }

    /// Sets the route label unless something (a CORS preflight) already has.
    public func routeIfUnset(_ pattern: String) {
        facts.withLock { if $0.route == nil { $0.route = pattern } }
    }
}
