import FerryHTTP
import FerryPostgres
import Foundation

/// What an operator does to a user on a support ticket (issue 48): disable
/// them, enable them again, or revoke all their tokens. Like the console's
/// other writes (``revokeToken``), each needs an admin (a viewer's try is
/// audited with 403), a body saying `{"confirm": true}`, and commits with its
/// audit entry.
///
/// The user's requests stop at once on every instance: the tokens are revoked
/// in the same transaction, this instance drops its cached checks of them here,
/// and the others on the `ferry_users` notification (core migration 0027),
/// JWTs included, whose next use is verified again and refused for a disabled user.
extension ConsoleRoutes {
    /// `POST /console/api/users/<id>/disable`: 200 `{"user_id", "disabled": true, "revoked_tokens"}`.
    func disableUser(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try setDisabled(true, request, context)
    }

    /// `POST /console/api/users/<id>/enable`: 200 `{"user_id", "disabled": false, "revoked_tokens": 0}`.
    func enableUser(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try setDisabled(false, request, context)
    }

    /// `POST /console/api/users/<id>/tokens/revoke`: every unrevoked token of
    /// the user; 200 `{"user_id", "revoked_tokens"}`.
    func revokeAllTokens(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let userID = try Self.userID(context)
        let hashes = try userWrite(
            action: "revoke_all_tokens", userID: userID, request, context,
            call: { _, hash, user in "ferry.console_revoke_user_tokens(\(hash)::bytea, \(user)::uuid)" })
        return Self.json(.object([("user_id", .string(userID)), ("revoked_tokens", .int(hashes.count))]))
    }

    private func setDisabled(_ disabled: Bool, _ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let userID = try Self.userID(context)
        let hashes = try userWrite(
            action: disabled ? "disable_user" : "enable_user", userID: userID, request, context,
            call: { binds, hash, user in
                let disabledParameter = binds.bind(.bool(disabled))
                return "ferry.console_set_user_disabled(\(hash)::bytea, \(user)::uuid, \(disabledParameter)::boolean)"
            })
        return Self.json(
            .object([("user_id", .string(userID)), ("disabled", .bool(disabled)), ("revoked_tokens", .int(hashes.count))]))
    }

    /// Runs one of the user writes (`call`: the SQL function's call, given the
    /// parameters of the token hash and the user id, binding its own values
    /// after them; it returns the revoked hashes or NULL for no such user) with
    /// its audit entry, in one statement; drops the revoked tokens and the
    /// user's cached checks from this instance. 404 for no such user.
    private func userWrite(
        action: String, userID: String, _ request: HTTPRequest, _ context: RequestContext,
        call: (inout SQLBinds, _ hash: SQLParameter, _ user: SQLParameter) -> String
    ) throws -> [String] {
        try Self.onlyQuery(request, [])
        let hash = try Self.tokenHash(request)
        try requireAdmin(hash, action: action, target: [("user_id", .string(userID))], context)
        _ = try Self.confirmed(request)
        let target = JSONValue.object([("user_id", .string(userID))])
        var binds = SQLBinds()
        let hashParameter = binds.bind(.text(hash))
        let userParameter = binds.bind(.text(userID))
        let write = call(&binds, hashParameter, userParameter)
        let actionParameter = binds.bind(.text(action))
        let targetParameter = binds.bind(.json(String(decoding: target.bytes, as: UTF8.self)))
        let requestParameter = binds.bind(.text(context.requestID))
        let statement = binds.statement(
            """
            WITH w AS MATERIALIZED (SELECT \(write) AS hashes)
            SELECT array_to_json(w.hashes)::text AS hashes,
                   ferry.console_audit(\(hashParameter)::bytea, \(actionParameter), \(targetParameter)::jsonb,
                                       CASE WHEN w.hashes IS NULL THEN 404 ELSE 200 END, \(requestParameter))
              FROM w
            """)
        let (session, results) = try console.run(hash, admin: true, [statement])
        Self.trace(session, context)
        guard let text = try results[0].first?.string("hashes") else { throw Problem.notFound("no such user") }
        let hashes = (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
        for revoked in hashes { database.forgetToken(revoked) }
        database.forgetUser(userID)
        return hashes
    }
}
