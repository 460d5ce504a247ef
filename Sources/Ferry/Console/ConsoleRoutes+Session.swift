import FerryHTTP

/// `/console/api/session`: an operator signs in with a name and password
/// (HTTP Basic) for a console token, asks who they are, and signs out.
extension ConsoleRoutes {
    /// `POST /console/api/session`: 201 `{"token", "expires_at", "operator"}`,
    /// audited; 401 for wrong credentials (the same whether or not the operator
    /// exists), 429 while the name is locked out.
    func signIn(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let basic = HTTPHeaders([("WWW-Authenticate", #"Basic realm="ferry-console", charset="UTF-8""#)])
        guard let credentials = try BasicCredentials(request) else {
            throw Problem(401, .unauthorized, "send an operator's name and password with HTTP Basic authentication", headers: basic)
        }
        let token = OperatorSession.generateToken()
        let hash = BearerToken.hash(token)
        let ttl = configuration.console.tokenTTLSeconds
        let results = try database.anonymous([
            PlannedStatement(
                """
                SELECT s.operator_id::text AS operator_id, s.role, s.expires_at, s.retry_after_ms
                  FROM ferry.operator_sign_in(\(bind: credentials.name), \(bind: credentials.password), \(bind: hash)::bytea, \(bind: ttl)::int) s
                """ as SQLQuery)
        ])
        guard let row = results[0].first else { throw Problem(500, .internalError, "the sign-in returned nothing") }
        guard let id = try row.string("operator_id"), let role = try row.string("role"), let expires = try row.int64("expires_at") else {
            if let retry = try row.int64("retry_after_ms"), retry > 0 {
                throw Problem(
                    429, .rateLimited, "too many failed sign-ins; retry later",
                    headers: HTTPHeaders([("Retry-After", String(max(1, (retry + 999) / 1000)))]))
            }
            throw Problem(401, .unauthorized, "wrong name or password", headers: basic)
        }
        let session = OperatorSession(id: id, name: credentials.name, role: role, expiresAt: expires)
        Self.trace(session, context)
        _ = try console.run(hash, [ConsoleDatabase.audit(hash, action: "sign_in", target: [], requestID: context.requestID)])
        return .json(
            JSONValue.object([
                ("token", .string(token)), ("expires_at", .int(Int(expires))), ("operator", session.json),
            ]).bytes, status: 201)
    }

    /// `GET /console/api/session`: the signed-in operator.
    func session(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let (session, _) = try console.run(try Self.tokenHash(request), [])
        Self.trace(session, context)
        return Self.json(.object([("operator", session.json)]))
    }

    /// `DELETE /console/api/session`: ends the calling console token (audited); 204.
    func signOut(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let hash = try Self.tokenHash(request)
        recentSessions.forget(hash)
        let (session, _) = try console.run(
            hash,
            [
                ConsoleDatabase.audit(hash, action: "sign_out", target: [], requestID: context.requestID),
                PlannedStatement("SELECT ferry.operator_sign_out(\(bind: hash)::bytea)" as SQLQuery),
            ])
        Self.trace(session, context)
        return HTTPResponse(status: 204)
    }

    /// `GET /console/api/audit?limit=`: the audit log, newest first (default 100, at most 1,000).
    func audit(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, ["limit", "search", "before"])
        let limit = try Self.limit(request, default: 100, max: 1_000)
        let search = request.queryValue("search") ?? ""
        guard search.unicodeScalars.count <= 200 else { throw Problem(400, .invalidQuery, "search is at most 200 characters") }
        var before: Int64?
        if let text = request.queryValue("before") {
            guard text.utf8.count <= 19, let id = Int64(text), id > 0 else {
                throw Problem(400, .invalidQuery, "before is an entry id: a whole number above 0")
            }
            before = id
        }
        let hash = try Self.tokenHash(request)
        let (session, results) = try console.run(
            hash,
            [
                PlannedStatement(
                    """
                    SELECT coalesce(json_agg(json_build_object('id', a.id, 'at', a.at, 'operator', a.operator_name,
                           'action', a.action, 'target', a.target, 'status', a.status, 'request_id', a.request_id)
                           ORDER BY a.id DESC), '[]') AS entries
                      FROM ferry.console_audit_search(\(bind: hash)::bytea, \(bind: search), \(bind: before.map { .int($0) } ?? .null)::bigint,
                                                      \(bind: limit)::int) a
                    """ as SQLQuery)
            ])
        Self.trace(session, context)
        return Self.json(.object([("entries", .raw(Array((try results[0].first?.string("entries") ?? "[]").utf8)))]))
    }

    /// `?limit=`: a whole number from 1 to `max`; `default` without one; else 400 `invalid_query`.
    static func limit(_ request: HTTPRequest, default value: Int, max: Int) throws -> Int {
        guard let text = request.queryValue("limit") else { return value }
        guard text.utf8.count <= 7, let n = Int(text), (1...max).contains(n) else {
            throw Problem(400, .invalidQuery, "limit must be a whole number from 1 to \(max)")
        }
        return n
    }
}
