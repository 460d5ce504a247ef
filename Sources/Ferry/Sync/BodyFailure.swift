import FerryPostgres

/// Database errors that mean the request body itself is not acceptable JSON.
enum BodyFailure {
    /// 400 `invalid_json` for a body PostgreSQL could not parse as jsonb (bad
    /// syntax, a bad Unicode escape, a NUL byte, nesting beyond its stack), else nil.
    static func map(_ error: PostgresError) -> Problem? {
        let state = error.sqlState ?? ""
        let isBody = ["22P05", "22021", "54001"].contains(state)
            || (["22P02", "2202E"].contains(state) && error.message.contains("json"))
        return isBody ? Problem(400, "invalid_json", "the body is not valid JSON") : nil
    }
}
