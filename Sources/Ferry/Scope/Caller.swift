import FerryHTTP

/// Who a request runs as, and where its database work goes: its bearer
/// (a hashed Ferry token or a JWT), the trace that learns the user id for the
/// log line, and the transaction it joins when one is open (a batch, an
/// `Idempotency-Key` write, a computed rank). Handed to
/// ``PostgresGateway/asCaller(_:_:)`` explicitly, which checks the bearer.
struct Caller: Sendable {
    let credential: Credential
    let trace: RequestTrace?
    let transaction: CallerTransaction?
    /// Whether its statements read public rows (core 0025): a GET and an
    /// Index do; writes, the default changes feed and everything else do not.
    var readsPublic = false

    /// The same caller reading public rows.
    var readingPublic: Caller {
        var caller = self
        caller.readsPublic = true
        return caller
    }

    /// The request's bearer; 401 when there is none.
    static func credential(_ request: HTTPRequest) throws -> Credential {
        guard let credential = BearerToken.credential(request) else { throw Problem.unauthorized() }
        return credential
    }
}
