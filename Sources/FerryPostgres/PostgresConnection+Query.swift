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

    /// Turns a `PGresult` into a value or an error, clearing it either way.
    func consume(_ result: OpaquePointer?) throws(PostgresError) -> PostgresResult {
        guard let result else {
            throw noting(PostgresError.from(connection: handle, fallback: "no result from libpq"))
        }
        defer { PQclear(result) }
        return try outcome(of: result)
    }

    /// Interprets a result without clearing it.
    func outcome(of result: OpaquePointer) throws(PostgresError) -> PostgresResult {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE:
            return PostgresResult(copying: result)
        case PGRES_EMPTY_QUERY:
            return PostgresResult(columns: [], rows: [], affectedRows: 0, commandTag: "")
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR:
            throw noting(PostgresError.from(result: result, connection: handle))
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            // The session is stuck in COPY mode, which this layer does not drive.
            sawFatalError = true
            throw PostgresError(kind: .protocolError, message: "COPY is not supported by PostgresConnection")
        default:
            sawFatalError = true
            let message = PostgresError.trimmed(PQresultErrorMessage(result)) ?? "unexpected result status"
            throw PostgresError(kind: .protocolError, message: message)
        }
    }

    /// With prepared statements on, the server-side name for `sql`, preparing it on first use.
    /// nil means "run unnamed" (feature off or the per-connection cache is full).
    func preparedName(for sql: String, parameterCount: Int32, handle: OpaquePointer) throws(PostgresError) -> String? {
        guard usesPreparedStatements else { return nil }
        let key = PreparedStatementKey(sql: sql)
        if let name = preparedNames[key] { return name }
        guard preparedNames.count < Self.preparedStatementLimit else { return nil }
        let name = "ferry_\(preparedNames.count)"
        _ = try consume(PQprepare(handle, name, sql, parameterCount, nil))
        preparedNames[key] = name
        return name
    }
}
