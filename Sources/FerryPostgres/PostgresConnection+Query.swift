// Single statements: one through the extended protocol with parameters (`query`), or a
// script through the simple protocol (`execute`).

import CLibPQ

extension PostgresConnection {
    /// Runs one statement through the extended protocol with text-format parameters
    /// (`$1`, `$2`…; nil is SQL NULL). Parameter types are inferred by the server.
    ///
    /// - Throws: `PostgresError`; `.connection` errors also mark the connection broken.
    public func query(_ sql: String, _ params: [String?] = []) throws(PostgresError) -> PostgresResult {
        let handle = try liveHandle()
        try checkParameters(params)
        let count = Int32(params.count)
        let sent: Int32
        if let name = try preparedName(for: sql, parameterCount: count, handle: handle) {
            sent = withCStringArray(params) { values in
                name.withCString { PQsendQueryPrepared(handle, $0, count, values, nil, nil, 0) }
            }
        } else {
            sent = withCStringArray(params) { values in
                sql.withCString { PQsendQueryParams(handle, $0, count, nil, values, nil, nil, 0) }
            }
        }
        guard sent == 1 else { throw refusedSend(handle, "the statement") }
        return try collectResults(handle)
    }

    /// Runs a script of any number of `;`-separated statements through the simple protocol,
    /// in one round trip (as migrations need). Without an explicit BEGIN the server runs the
    /// statements as one implicit transaction, so a failure leaves none of them applied.
    ///
    /// - Throws: `PostgresError` for the first failing statement; `position` indexes the
    ///   whole script.
    public func execute(_ script: String) throws(PostgresError) {
        let handle = try liveHandle()
        guard PQsendQuery(handle, script) == 1 else { throw refusedSend(handle, "the script") }
        _ = try collectResults(handle)
    }
}
