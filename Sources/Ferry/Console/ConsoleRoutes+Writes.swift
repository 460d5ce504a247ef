import FerryHTTP
import FerryPostgres

/// The console's writes (a third, fetching the providers' keys, is in
/// ConsoleRoutes+Keys.swift). The console is read-only by default: these need
/// an admin operator (403 for a viewer), a body saying `{"confirm": true}`
/// (422 `confirmation_required` otherwise; the page asks first), and each is
/// audited, with who did it, before it acts.
extension ConsoleRoutes {
    /// `POST /console/api/users/<id>/tokens/<token id>/revoke`: revokes one of
    /// the user's tokens (its id as the user's token list gives it). The audit
    /// entry and the revocation commit together. This instance refuses the
    /// token at once; other instances within `auth.token_cache_seconds`.
    /// 200 `{"revoked": true, "token_id"}`; 404 when the user holds no
    /// unrevoked token with that id.
    func revokeToken(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, [])
        let userID = try Self.userID(context)
        let tokenID = (context.parameters["token"] ?? "").lowercased()
        let hash = try Self.tokenHash(request)
        try requireAdmin(hash, action: "revoke_token", target: [("user_id", .string(userID)), ("token_id", .string(tokenID))], context)
        _ = try Self.confirmed(request)
        guard tokenID.utf8.count == 16, tokenID.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            throw Problem.notFound("no such token")
        }
        let target = JSONValue.object([("user_id", .string(userID)), ("token_id", .string(tokenID))])
        // One statement: the revocation first, then its audit entry with what it came to.
        let (session, results) = try console.run(
            hash, admin: true,
            [
                PlannedStatement(
                    """
                    WITH r AS MATERIALIZED (SELECT ferry.console_revoke_token(\(bind: hash)::bytea, \(bind: userID)::uuid, \(bind: tokenID)) AS hash)
                    SELECT r.hash, ferry.console_audit(\(bind: hash)::bytea, 'revoke_token', \(bind: .json(String(decoding: target.bytes, as: UTF8.self)))::jsonb,
                                                       CASE WHEN r.hash IS NULL THEN 404 ELSE 200 END, \(bind: context.requestID))
                      FROM r
                    """ as SQLQuery)
            ])
        Self.trace(session, context)
        guard let revoked = try results[0].first?.string("hash") else {
            throw Problem.notFound("the user holds no unrevoked token with that id")
        }
        database.forgetToken(revoked)
        return Self.json(.object([("revoked", .bool(true)), ("token_id", .string(tokenID))]))
    }

    /// `POST /console/api/purge`: purges now what the server's periodic purge
    /// would (tombstones and access log entries older than
    /// `tombstones.retention_days`, or the body's `retention_days`), in the
    /// same short batches. Change cursors from before the purged entries then
    /// answer 410 `cursor_expired`: with `retention_days` 0, every device's.
    /// 200 `{"retention_days", "tombstones", "access_log_entries"}`.
    func purge(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, [])
        let hash = try Self.tokenHash(request)
        try requireAdmin(hash, action: "purge", target: [], context)
        let body = try Self.confirmed(request, allowed: ["retention_days"])
        let days = body.retentionDays ?? configuration.tombstones.retentionDays
        guard (0...36_500).contains(days) else {
            throw Problem(400, .badRequest, "retention_days is a whole number from 0 to 36500")
        }
        let (session, _) = try console.run(
            hash, admin: true,
            [
                ConsoleDatabase.audit(hash, action: "purge", target: [("retention_days", .int(days))], requestID: context.requestID)
            ])
        Self.trace(session, context)
        var counts: [TombstonePurge.Kind: Int64] = [:]
        do {
            _ = try pool.withConnection { connection in
                try TombstonePurge.run(
                    connection: connection, ageMs: TombstonePurge.ageMs(days: days),
                    progress: { kind, _, total in counts[kind] = total })
            }
        } catch let error as PostgresError {
            throw DatabaseFailure.map(error, statementOffset: 0)
        }
        let tombstones = Int(counts[.tombstones] ?? 0), entries = Int(counts[.accessLog] ?? 0)
        _ = try console.run(
            hash,
            [
                ConsoleDatabase.audit(
                    hash, action: "purge_done",
                    target: [
                        ("retention_days", .int(days)), ("tombstones", .int(tombstones)),
                        ("access_log_entries", .int(entries)),
                    ],
                    status: 200, requestID: context.requestID)
            ])
        logger.notice(
            "console purge",
            metadata: [
                "operator": "\(session.name)", "tombstones": "\(tombstones)", "access_log_entries": "\(entries)",
            ])
        return Self.json(
            .object([
                ("retention_days", .int(days)), ("tombstones", .int(tombstones)), ("access_log_entries", .int(entries)),
            ]))
    }

    /// Checks that the console token's operator is an admin. A viewer's refused
    /// write is audited (its status 403) before the 403 goes out: an operator
    /// trying what their role forbids is what an audit log is for.
    func requireAdmin(_ hash: String, action: String, target: [(String, JSONValue)], _ context: RequestContext) throws {
        do {
            _ = try console.run(hash, admin: true, [])
        } catch let problem as Problem where problem.status == 403 {
            let (session, _) = try console.run(
                hash,
                [
                    ConsoleDatabase.audit(hash, action: action, target: target, status: 403, requestID: context.requestID)
                ])
            Self.trace(session, context)
            throw problem
        }
    }
}
