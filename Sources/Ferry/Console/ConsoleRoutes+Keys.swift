import FerryHTTP

/// The console's third write: fetching the identity providers' keys now
/// (issue 51), for an operator who withdrew a key at the provider and will not
/// wait for the next scheduled fetch. Guarded like the other writes
/// (ConsoleRoutes+Writes.swift): an admin, `{"confirm": true}`, audited before
/// it acts and again with what it came to.
extension ConsoleRoutes {
    /// `POST /console/api/jwks/refetch`: fetches every JWT provider's JWKS
    /// (those with a `jwks_url`) anew, all at once, each by a fetch that starts
    /// after this request (one already running is followed by a new one), and
    /// answers once they have finished or one fetch timeout (plus a second)
    /// has passed. A provider whose fetch finished has, on this instance, its
    /// withdrawn keys refused and the tokens they verified dropped from the
    /// cache before the answer goes out. The wait holds this request's worker
    /// (an admin's, bounded by `auth.jwks_fetch_timeout_seconds`); no app
    /// request waits for it.
    /// 200 `{"providers": [{"issuer", "status": "fetched"|"failed"|"running", "keys", "withdrawn", "reason"}]}`.
    func refetchKeys(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, [])
        let hash = try Self.tokenHash(request)
        try requireAdmin(hash, action: "refetch_keys", target: [], context)
        _ = try Self.confirmed(request)
        let (session, _) = try console.run(
            hash, admin: true,
            [ConsoleDatabase.audit(hash, action: "refetch_keys", target: [], requestID: context.requestID)])
        Self.trace(session, context)
        let outcomes = database.jwt?.refetchAll() ?? []
        let providers: [JSONValue] = outcomes.map { issuer, outcome in
            switch outcome {
            case .running:
                return .object([("issuer", .string(issuer)), ("status", "running")])
            case .finished(let fetch) where fetch.fetched:
                return .object([
                    ("issuer", .string(issuer)), ("status", "fetched"), ("keys", .int(fetch.keys)), ("withdrawn", .int(fetch.withdrawn)),
                ])
            case .finished(let fetch):
                return .object([("issuer", .string(issuer)), ("status", "failed"), ("reason", .string(fetch.reason ?? ""))])
            }
        }
        let fetched = outcomes.filter { if case .finished(let fetch) = $0.outcome { fetch.fetched } else { false } }.count
        _ = try console.run(
            hash,
            [
                ConsoleDatabase.audit(
                    hash, action: "refetch_keys_done",
                    target: [("providers", .int(outcomes.count)), ("fetched", .int(fetched))],
                    status: 200, requestID: context.requestID)
            ])
        logger.notice(
            "console refetched JWT keys", metadata: ["operator": "\(session.name)", "providers": "\(outcomes.count)", "fetched": "\(fetched)"])
        return Self.json(.object([("providers", .array(providers))]))
    }
}
