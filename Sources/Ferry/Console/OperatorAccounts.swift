import FerryPostgres

/// Operators as `ferry operator` manages them, as the owner role on a
/// connection of its own (the serve role can neither create operators nor
/// mint their tokens: migration 0018).
public enum OperatorAccounts {
    /// An operator as listed.
    public struct Listed: Sendable, Equatable {
        public let id: String
        public let name: String
        public let role: String
        /// Unrevoked, unexpired console tokens.
        public let liveTokens: Int
    }

    /// The roles an operator may have: `viewer` reads, `admin` also writes.
    public static let roles = OperatorSession.roles

    /// Why an operator command failed, in words for the terminal.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates an operator; returns its id.
    public static func create(name: String, password: String, role: String, connection: PostgresConnection) throws -> String {
        guard roles.contains(role) else { throw Failure(description: "the role is viewer or admin, not \(role)") }
        guard password.utf8.count >= 8 else { throw Failure(description: "the password must have at least 8 characters") }
        do {
            let created = try connection.run(
                "SELECT ferry.create_operator(\(bind: name), \(bind: password), \(bind: role)) AS id" as SQLQuery)
            guard let id = try created.first?.string("id") else {
                throw Failure(description: "creating the operator returned nothing")
            }
            return id
        } catch let error as PostgresError where error.sqlState == "23505" {
            throw Failure(description: "an operator named \(name) exists")
        } catch let error as PostgresError where error.sqlState == "23514" {
            throw Failure(description: "\(name) is not an acceptable operator name (letters, digits and _.@+-, at most 128)")
        } catch let error as PostgresError where error.sqlState == "42883" || error.sqlState == "3F000" {
            throw Failure(description: "this database has no operators yet: run `ferry migrate` first")
        }
    }

    /// Every operator, by name.
    public static func list(connection: PostgresConnection) throws -> [Listed] {
        try connection.query(
            """
            SELECT o.id::text AS id, o.name, o.role,
                   (SELECT count(*) FROM ferry.operator_tokens t WHERE t.operator_id = o.id AND NOT t.revoked AND t.expires_at > now())
                     AS live_tokens
              FROM ferry.operators o ORDER BY o.name
            """
        ).rows.map { row in
            Listed(id: row["id"] ?? "", name: row["name"] ?? "", role: row["role"] ?? "", liveTokens: (try? row.int("live_tokens")) ?? 0)
        }
    }

    /// Removes an operator and its tokens (its audit entries stay, with its name); whether there was one.
    public static func remove(name: String, connection: PostgresConnection) throws -> Bool {
        try connection.run("DELETE FROM ferry.operators WHERE name = \(bind: name) RETURNING id" as SQLQuery).first != nil
    }

    /// Changes an operator's role; whether there was one.
    public static func setRole(name: String, role: String, connection: PostgresConnection) throws -> Bool {
        guard roles.contains(role) else { throw Failure(description: "the role is viewer or admin, not \(role)") }
        return try connection.run("UPDATE ferry.operators SET role = \(bind: role) WHERE name = \(bind: name) RETURNING id" as SQLQuery)
            .first != nil
    }

    /// Issues a console token for an operator without a password (for scripts
    /// and the tests); nil when there is no such operator.
    public static func issueToken(name: String, ttlSeconds: Int, connection: PostgresConnection) throws -> (token: String, expiresAt: Int64)? {
        let token = OperatorSession.generateToken()
        let result = try connection.run(
            """
            SELECT floor(extract(epoch FROM ferry.issue_operator_token(o.id, \(bind: BearerToken.hash(token))::bytea, \(bind: ttlSeconds)::int)) * 1000)::bigint
                     AS expires_at
              FROM ferry.operators o WHERE o.name = \(bind: name)
            """ as SQLQuery)
        guard let expires = try result.first?.int64("expires_at") else { return nil }
        return (token, expires)
    }
}
