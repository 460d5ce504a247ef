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
        let result: OpaquePointer?
        if let name = try preparedName(for: sql, parameterCount: count, handle: handle) {
            result = withCStringArray(params) { values in
                name.withCString { PQexecPrepared(handle, $0, count, values, nil, nil, 0) }
            }
        } else {
            result = withCStringArray(params) { values in
                sql.withCString { PQexecParams(handle, $0, count, nil, values, nil, nil, 0) }
            }
        }
        return try consume(result)
    }

    /// Runs a script of any number of `;`-separated statements through the simple protocol,
    /// in one round trip (as migrations need). Without an explicit BEGIN the server runs the
    /// statements as one implicit transaction, so a failure leaves none of them applied.
    ///
    /// - Throws: `PostgresError` for the first failing statement; `position` indexes the
    ///   whole script.
    public func execute(_ script: String) throws(PostgresError) {
        let handle = try liveHandle()
        _ = try consume(PQexec(handle, script))
    }
}
