import FerryHTTP
import FerryPostgres

/// A signed-in operator, as `ferry.operator_session` found them from the
/// console token of a request.
///
/// Console tokens are Ferry bearer tokens with the prefix `op_` (so that a
/// person reading a log or a script knows one when they see it), stored only
/// as SHA-256 hashes in `ferry.operator_tokens`, apart from users' tokens: an
/// app user's token is in no table the console reads, so it opens nothing
/// here (401), and a console token opens no `/v1` route (also 401).
struct OperatorSession: Sendable, Equatable {
    let id: String
    let name: String
    /// `viewer` (reads) or `admin` (also revokes tokens and purges).
    let role: String
    /// When the token expires, ms since the epoch.
    let expiresAt: Int64

    var isAdmin: Bool { role == Self.admin }

    static let admin = "admin"
    static let viewer = "viewer"
    static let roles = [viewer, admin]

    /// The prefix every console token starts with.
    static let tokenPrefix = "op_"

    /// A new console token.
    static func generateToken() -> String { tokenPrefix + BearerToken.generate() }

    /// The SHA-256 hash (as `ferry.operator_tokens` stores it) of the request's
    /// console token; 401 when the request carries none.
    static func tokenHash(_ request: HTTPRequest) throws -> String {
        guard let token = BearerToken.from(request), token.hasPrefix(tokenPrefix) else { throw unauthorized }
        return BearerToken.hash(token)
    }

    /// The one 401 of the console's API, whatever was wrong with the token.
    static let unauthorized = Problem.unauthorized("sign in to the console: a console token is required")

    /// 403 for a viewer asking for a write.
    static let forbidden = Problem(403, .forbidden, "this needs an admin operator; yours is a viewer")

    /// The statement that checks a console token (FR401, or FR403 for a viewer
    /// when `admin`) and returns its operator.
    static func check(_ tokenHash: String, admin: Bool = false) -> PlannedStatement {
        PlannedStatement(
            "SELECT operator_id::text AS operator_id, name, role, expires_at FROM ferry.operator_session(\(bind: tokenHash)::bytea, \(bind: admin))"
                as SQLQuery)
    }

    /// The operator of `check`'s result.
    init(_ result: PostgresResult) throws {
        guard let row = result.first, let id = try row.string("operator_id"), let name = try row.string("name"),
            let role = try row.string("role"), let expires = try row.int64("expires_at")
        else { throw OperatorSession.unauthorized }
        self.init(id: id, name: name, role: role, expiresAt: expires)
    }

    init(id: String, name: String, role: String, expiresAt: Int64) {
        self.id = id
        self.name = name
        self.role = role
        self.expiresAt = expiresAt
    }

    var json: JSONValue {
        .object([("id", .string(id)), ("name", .string(name)), ("role", .string(role)), ("expires_at", .int(Int(expiresAt)))])
    }
}

extension OperatorSession {
    /// The console's answer to a database error of a console function: its own
    /// 401 and 403 (SQLSTATEs FR401 and FR403), a value that does not fit a
    /// column (22xxx) or a column that does not exist (42703) as 400
    /// `invalid_query`; anything else unchanged.
    static func mapping(_ error: any Error) -> any Error {
        if let problem = error as? Problem, problem.status == 401 { return unauthorized }
        guard let error = error as? PostgresError, let state = error.sqlState else { return error }
        if state == "FR401" { return unauthorized }
        if state == "FR403" { return forbidden }
        if state.hasPrefix("22") || state == "42703" {
            return Problem(400, .invalidQuery, "a filter does not fit the table: \(error.message.prefix(120))")
        }
        return error
    }
}
