import FerryHTTP

/// What Ferry's layers know of the request being answered beyond HTTP. It
/// rides in ``RequestContext/attachment``, set by the outermost middleware,
/// so every handler's signature carries it.
struct RequestScope: Sendable {
    /// Facts learned deep in the handler (the user, a route label) for the
    /// request log line; nil outside the server's middleware (tests, batch probes).
    let trace: RequestTrace?
    /// The caller's transaction the request's statements join, if one is open.
    let transaction: CallerTransaction?

    init(trace: RequestTrace? = nil, transaction: CallerTransaction? = nil) {
        self.trace = trace
        self.transaction = transaction
    }

    /// The caller `credential` identifies, in this scope.
    func caller(_ credential: Credential) -> Caller { Caller(credential: credential, trace: trace, transaction: transaction) }

    /// This scope inside `transaction`: whatever runs with it joins that transaction.
    func joining(_ transaction: CallerTransaction) -> RequestScope {
        RequestScope(trace: trace, transaction: transaction)
    }
}

extension RequestContext {
    /// Ferry's scope of this request (empty when no middleware set one).
    var scope: RequestScope {
        get { attachment as? RequestScope ?? RequestScope() }
        set { attachment = newValue }
    }

    /// The caller `credential` identifies, in this request's scope.
    func caller(_ credential: Credential) -> Caller { scope.caller(credential) }

    /// This context inside `transaction`, for what a write hook or a batch runs in it.
    func joining(_ transaction: CallerTransaction) -> RequestContext {
        var context = self
        context.scope = scope.joining(transaction)
        return context
    }
}
