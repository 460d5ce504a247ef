import FerryPostgres

extension ScratchDatabase {
    /// Creates a user as the owner and returns its id and a bearer token for it.
    public func user(_ name: String, password: String = "correct-horse") throws -> (id: String, token: String) {
        let connection = try PostgresConnection(url: ownerURL)
        defer { connection.close() }
        let token = try TestServerless.token(connection, user: name, password: password)
        let id = try connection.query("SELECT id FROM ferry.user_by_name(\(bind: name))" as PostgresStatement).first?["id"] ?? ""
        return (id, token)
    }

    /// Runs SQL as the owner (bypassing RLS), e.g. to write "from psql".
    public func ownerQuery(_ sql: String, _ params: [String?] = []) throws -> PostgresResult {
        let connection = try PostgresConnection(url: ownerURL)
        defer { connection.close() }
        return try connection.query(sql, params)
    }
}
