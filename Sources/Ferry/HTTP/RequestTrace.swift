import FerryBase

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
