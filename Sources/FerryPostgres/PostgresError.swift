// `PostgresError`, the one error type of this module, with its kinds, and how
// it is built from libpq's results and connection messages, classifying the
// failures after which a session is gone.

import CLibPQ

/// An error from PostgreSQL, from libpq, or from the pool, with every diagnostic field the
/// server sent.
///
/// `kind` is what callers branch on (for example the HTTP layer answers 503 for
/// `.connection` and `.poolTimeout`); `sqlState` is the precise server code.
public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broad class of failure.
    public enum Kind: String, Sendable, Hashable {
        /// PostgreSQL is unreachable, refused the connection, or the session died
        /// (SQLSTATE class 08, 57P01–57P03, a FATAL error, or a dead socket).
        case connection
        /// The server rejected a statement with an ERROR (constraint, syntax, permission…).
        case server
        /// The statement was cancelled, normally by `statement_timeout` (SQLSTATE 57014).
        case timeout
        /// No pooled connection became free within the pool's acquire timeout.
        case poolTimeout
        /// libpq or the server did something this layer does not expect, or the API was
        /// misused (for example a nested `transaction`).
        case protocolError
        /// A typed row accessor could not convert a value, or the column does not exist.
        case decoding
    }

    /// The broad class of failure.
    public var kind: Kind
    /// Five-character SQLSTATE (`PG_DIAG_SQLSTATE`), e.g. "23505", "40001", "57014".
    public var sqlState: String?
    /// Primary human-readable message (`PG_DIAG_MESSAGE_PRIMARY`, or libpq's message).
    public var message: String
    /// Optional secondary message (`PG_DIAG_MESSAGE_DETAIL`).
    public var detail: String?
    /// Optional suggestion (`PG_DIAG_MESSAGE_HINT`).
    public var hint: String?
    /// Name of the violated constraint (`PG_DIAG_CONSTRAINT_NAME`).
    public var constraint: String?
    /// Column the error concerns (`PG_DIAG_COLUMN_NAME`).
    public var column: String?
    /// Table the error concerns (`PG_DIAG_TABLE_NAME`).
    public var table: String?
    /// Schema of the table the error concerns (`PG_DIAG_SCHEMA_NAME`).
    public var schema: String?
    /// 1-based *character* (not byte) offset into the statement text where the error was
    /// detected (`PG_DIAG_STATEMENT_POSITION`). For `execute(_:)` it indexes the whole script.
    public var position: Int?
    /// Non-localized severity (`PG_DIAG_SEVERITY_NONLOCALIZED`): "ERROR", "FATAL", "PANIC".
    public var severity: String?
    /// Call-stack context (`PG_DIAG_CONTEXT`), e.g. the PL/pgSQL line that raised.
    public var context: String?
    /// In a pipeline, the index (into the caller's statement array) of the statement that
    /// failed. Equals the statement count when the closing COMMIT failed (for example a
    /// deferred constraint or a serialization failure); nil when BEGIN or the connection failed.
    public var statementIndex: Int?

    /// Creates an error; every diagnostic field defaults to nil.
    public init(
        kind: Kind, message: String, sqlState: String? = nil, detail: String? = nil,
        hint: String? = nil, constraint: String? = nil, column: String? = nil,
        table: String? = nil, schema: String? = nil, position: Int? = nil,
        severity: String? = nil, context: String? = nil, statementIndex: Int? = nil
    ) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.column = column
        self.table = table
        self.schema = schema
        self.position = position
        self.severity = severity
        self.context = context
        self.statementIndex = statementIndex
    }

    /// A one-line summary: kind, SQLSTATE and message (never connection credentials).
    public var description: String {
        var text = "PostgresError.\(kind.rawValue)"
        if let sqlState { text += " [\(sqlState)]" }
        text += ": \(message)"
        if let statementIndex { text += " (statement \(statementIndex))" }
        return text
    }
}

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
