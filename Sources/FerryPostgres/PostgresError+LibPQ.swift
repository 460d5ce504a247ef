import CLibPQ

extension PostgresError {
    /// Builds an error from a failed `PGresult`, classifying it as connection-level when the
    /// session is gone. `connection` may be nil when only the result is known.
    static func from(result: OpaquePointer, connection: OpaquePointer?) -> PostgresError {
        func field(_ code: Character) -> String? {
            guard let value = PQresultErrorField(result, Int32(code.asciiValue!)) else { return nil }
            return String(cString: value)
        }
        let sqlState = field("C")
        let message = field("M") ?? trimmed(PQresultErrorMessage(result)) ?? "unknown libpq error"
        let severity = field("V")
        let connectionDead = connection.map { PQstatus($0) != CONNECTION_OK } ?? false
        return PostgresError(
            kind: classify(sqlState: sqlState, severity: severity, connectionDead: connectionDead),
            message: message, sqlState: sqlState, detail: field("D"), hint: field("H"),
            constraint: field("n"), column: field("c"), table: field("t"), schema: field("s"),
            position: field("P").flatMap { Int($0) }, severity: severity, context: field("W")
        )
    }

    /// Builds an error from `PQerrorMessage` when libpq failed without a result.
    static func from(connection: OpaquePointer?, fallback: String) -> PostgresError {
        let message = connection.flatMap { trimmed(PQerrorMessage($0)) } ?? fallback
        let dead = connection.map { PQstatus($0) != CONNECTION_OK } ?? true
        return PostgresError(kind: dead ? .connection : .protocolError, message: message)
    }

    /// Maps SQLSTATE and severity onto a `Kind`. Errors that end the session are
    /// `.connection` whatever their code, so the pool discards the connection.
    static func classify(sqlState: String?, severity: String?, connectionDead: Bool) -> Kind {
        if connectionDead || severity == "FATAL" || severity == "PANIC" { return .connection }
        guard let sqlState else { return .protocolError }
        if sqlState.hasPrefix("08") { return .connection }
        switch sqlState {
        case "57P01", "57P02", "57P03": return .connection
        case "57014": return .timeout
        default: return .server
        }
    }

    /// libpq messages end in a newline and sometimes carry an "ERROR:  " prefix; both are noise.
    static func trimmed(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        var text = String(cString: pointer)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        for prefix in ["ERROR:  ", "FATAL:  "] where text.hasPrefix(prefix) {
            text.removeFirst(prefix.count)
        }
        return text.isEmpty ? nil : text
    }
}
