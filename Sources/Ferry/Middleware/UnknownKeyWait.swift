import FerryBase
import FerryHTTP

/// Issue 51: a request whose JWT names a `kid` its provider does not hold,
/// while a fetch of that provider's keys runs (or the request just started
/// one), waits for that fetch parked on the event loop, as a long poll
/// waits: no worker, no pool connection. It is resumed once, when the fetch
/// ends (found, failed or timed out) or ``JWTVerifier/keyWait(_:)`` has
/// passed, and then passes on as any request: a key the fetch found verifies
/// (a rotation costs its first requests one fetch's wait, not a 503), else
/// ``JWTVerifier/verify(_:now:)`` answers as it did before (503
/// `jwks_unavailable` with `Retry-After` while a fetch still runs). A resumed
/// request never parks again. At shutdown a parked request is answered 503
/// `jwks_unavailable` at once.
///
/// Cheap for everything else: a request without a JWT, or whose JWT this
/// process verified already (the cache), passes on after one hash lookup,
/// without reading the token; only an unverified JWT's header and claims are
/// read, and only an unknown `kid` while a fetch runs parks. A flood of
/// made-up `kid`s then costs a worker two short passes per request per fetch,
/// instead of a refusal as fast as its clients can send.
struct UnknownKeyWait: Middleware {
    let database: PostgresGateway
    let verifier: JWTVerifier
    /// The exchanges this step parked, until they resume or end: what tells
    /// its own resumptions from a long poll's.
    private let parked = Locked<[ObjectIdentifier: (ticket: ParkingTicket, keys: ProviderKeys)]>([:])

    init(database: PostgresGateway, verifier: JWTVerifier) {
        self.database = database
        self.verifier = verifier
    }

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        if let resumption = context.resumption {
            if let ticket = context.parkingTicket(), let keys = take(ticket) {
                keys.forget(ticket)
                // Answer now, without verifying: the server is going away.
                if resumption.reason == .shutdown { throw Problem.keysFetching(issuer: keys.provider.issuer) }
            }
            return try next(request, context)
        }
        guard case .jwt(let hash, let token)? = BearerToken.credential(request), database.jwts.entry(for: hash) == nil,
            let ticket = context.parkingTicket()
        else { return try next(request, context) }
        ticket.arm()
        guard let keys = verifier.waitForKey(token, ticket: ticket) else { return try next(request, context) }
        let key = ObjectIdentifier(ticket)
        parked.withLock { $0[key] = (ticket, keys) }
        ticket.whenAbandoned { [parked] in
            parked.withLock { _ = $0.removeValue(forKey: key) }
            keys.forget(ticket)
        }
        return .parked(HTTPParking(ticket: ticket, deadline: context.receivedAt + JWTVerifier.keyWait(keys)))
    }

    /// The keys `ticket` waited for, if this step parked it; forgets it.
    private func take(_ ticket: ParkingTicket) -> ProviderKeys? {
        parked.withLock { $0.removeValue(forKey: ObjectIdentifier(ticket))?.keys }
    }
}
