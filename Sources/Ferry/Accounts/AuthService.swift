import FerryPostgres

/// Sign-in, tokens and users, over the `ferry` schema's functions.
///
/// The functions are SECURITY DEFINER, so the serve role never reads the
/// users or tokens tables directly; passwords are checked by bcrypt inside
/// PostgreSQL (pgcrypto), which keeps the slow hash off Ferry's I/O threads.
public struct AuthService: Sendable {
    /// Where the functions live.
    public let database: PostgresGateway
    /// Lifetime of issued tokens.
    public let tokenTTLSeconds: Int

    public init(database: PostgresGateway, tokenTTLSeconds: Int) {
        self.database = database
        self.tokenTTLSeconds = tokenTTLSeconds
    }

    public struct IssuedToken: Sendable {
        /// The bearer token; shown once, stored only hashed.
        public let token: String
        /// Expiry, ms since the epoch.
        public let expiresAt: Int64
        /// The user it authenticates.
        public let userID: String
    }

    /// What a sign-in attempt came to.
    public enum SignIn: Sendable {
        case issued(IssuedToken)
        /// Wrong name or password: the same answer whether or not the user exists.
        case invalid
        /// Too many failures: try again after this many milliseconds.
        case throttled(retryAfterMs: Int64)
    }

    /// Checks credentials and, when they hold, issues a token, in one statement.
    public func signIn(name: String, password: String) throws -> SignIn {
        let token = BearerToken.generate()
        let query: SQLQuery = """
            WITH a AS MATERIALIZED (SELECT * FROM ferry.authenticate(\(bind: name), \(bind: password)))
            SELECT a.user_id, a.retry_after_ms,
                   CASE WHEN a.user_id IS NOT NULL
                        THEN floor(extract(epoch FROM ferry.issue_token(a.user_id, \(bind: BearerToken.hash(token))::bytea,
                                                                        \(bind: tokenTTLSeconds)::int)) * 1000)::bigint
                   END AS expires_at
            FROM a
            """
        let result = try database.anonymous([PlannedStatement(query)])[0]
        guard let row = result.first else { return .invalid }
        if let userID = row["user_id"], let expires = try row.int64("expires_at") {
            return .issued(IssuedToken(token: token, expiresAt: expires, userID: userID))
        }
        let retry = try row.int64("retry_after_ms") ?? 0
        return retry > 0 ? .throttled(retryAfterMs: retry) : .invalid
    }

    /// Issues a token for a user by name without a password (the CLI, as the owner role).
    public static func issueToken(name: String, ttlSeconds: Int, connection: PostgresConnection) throws -> IssuedToken? {
        let token = BearerToken.generate()
        let result = try connection.run(
            """
            SELECT u.id, floor(extract(epoch FROM ferry.issue_token(u.id, \(bind: BearerToken.hash(token))::bytea, \(bind: ttlSeconds)::int))
                         * 1000)::bigint AS expires_at
            FROM ferry.user_by_name(\(bind: name)) u
            """)
        guard let row = result.first, let id = try row.string("id"), let expires = try row.int64("expires_at") else { return nil }
        return IssuedToken(token: token, expiresAt: expires, userID: id)
    }

    /// Creates a user (`ferry user create`, as the owner role on `connection`);
    /// returns its id. A taken name throws 409 `already_exists`, an
    /// unacceptable one 422 `validation_failed`.
    public static func createUser(name: String, password: String, connection: PostgresConnection) throws -> String {
        try createUser(name: name, password: password) { try connection.run($0) }
    }

    /// Creates a user through `run` (the sign-up route: `PostgresGateway.anonymous`),
    /// with the same checks and answers as the CLI's.
    static func createUser(name: String, password: String, run: (PlannedStatement) throws -> PostgresResult) throws -> String {
        guard password.utf8.count >= 8 else {
            throw Problem(
                422, .validationFailed, "the password must have at least 8 characters",
                extra: [("errors", .array([.object([("field", "password"), ("code", "too_short")])]))])
        }
        do {
            let result = try run(PlannedStatement("SELECT ferry.create_user(\(bind: name), \(bind: password))::text AS id" as SQLQuery))
            guard let id = try result.first?.string("id") else { throw Problem.unavailable("user creation returned nothing") }
            return id
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw Problem(409, .alreadyExists, "a user with that name exists")
        } catch let error as PostgresError where error.sqlState?.hasPrefix("23") == true || error.sqlState?.hasPrefix("22") == true {
            throw Problem(
                422, .validationFailed, "the user name is not acceptable",
                extra: [("errors", .array([.object([("field", "name"), ("code", "invalid")])]))])
        }
    }
}
