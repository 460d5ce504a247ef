import CLibPQ

/// One libpq connection to PostgreSQL, using blocking calls.
///
/// Not `Sendable`: a connection belongs to one thread at a time. `PostgresPool` hands
/// connections to worker threads one borrower at a time. Never call it from an event-loop
/// thread; every call may wait for the network.
public final class PostgresConnection {
    /// The libpq handle; nil once closed.
    var handle: OpaquePointer?
    /// Set when a connection-level failure was seen even if `PQstatus` still reads OK.
    var sawFatalError = false
    /// Whether statements are prepared once per connection and then run by name.
    let usesPreparedStatements: Bool
    /// SQL text to server-side statement name, for `usesPreparedStatements`.
    var preparedNames: [PreparedStatementKey: String] = [:]
    /// When the connection was last returned to a pool (for idle liveness checks).
    var idleSince: ContinuousClock.Instant = .now

    /// The most statements cached per connection; beyond it statements run unnamed.
    static let preparedStatementLimit = 512

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - url: a `postgresql://` URL (multi-host URLs included) or a `key=value` conninfo
    ///     string, passed to libpq untouched. `connect_timeout` defaults to 5 seconds and
    ///     `application_name` to "ferry" unless the string sets them.
    ///   - preparedStatements: prepare each distinct SQL text once per connection and then
    ///     execute it by name. Off by default, because PgBouncer in transaction mode cannot
    ///     follow named statements across server connections.
    /// - Throws: `PostgresError` of kind `.connection` with libpq's message.
    public init(url: String, preparedStatements: Bool = false) throws(PostgresError) {
        usesPreparedStatements = preparedStatements
        // Entries before "dbname" are defaults that the expanded URL/conninfo may override.
        let keywords: [String?] = ["connect_timeout", "application_name", "dbname", nil]
        let values: [String?] = ["5", "ferry", url, nil]
        let connection = withCStringArray(keywords) { keys in
            withCStringArray(values) { vals in PQconnectdbParams(keys, vals, 1) }
        }
        guard let connection else {
            throw PostgresError(kind: .connection, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let error = PostgresError.from(connection: connection, fallback: "connection failed")
            PQfinish(connection)
            throw PostgresError(kind: .connection, message: error.message)
        }
        handle = connection
        // libpq prints notices (e.g. "relation already exists, skipping") to stderr by default;
        // drop them, but notice a FATAL the server sent while the session sat idle (libpq
        // routes those through the notice path), because the session is then gone.
        // Unretained is safe: the receiver is only called from libpq calls made through this
        // object, and `close()` (at the latest in deinit) finishes the PGconn first.
        PQsetNoticeReceiver(connection, { context, result in
            guard let context, let result, let severity = PQresultErrorField(result, Int32(UInt8(ascii: "V"))) else { return }
            let level = String(cString: severity)
            if level == "FATAL" || level == "PANIC" {
                Unmanaged<PostgresConnection>.fromOpaque(context).takeUnretainedValue().sawFatalError = true
            }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { close() }

    /// True when the connection cannot be used any more: closed, `PQstatus` is not
    /// `CONNECTION_OK`, or a connection-level error (SQLSTATE 08xxx, 57P0x, FATAL) was seen.
    public var isBroken: Bool {
        guard let handle else { return true }
        return sawFatalError || PQstatus(handle) != CONNECTION_OK
    }

    /// The server's version number, e.g. 150018, or 0 when closed.
    public var serverVersion: Int { handle.map { Int(PQserverVersion($0)) } ?? 0 }

    /// The backend process id (useful to tell whether a pool reused a connection).
    public var backendPID: Int32 { handle.map { PQbackendPID($0) } ?? 0 }

    /// True while the session is inside a transaction block (open or failed), or unknown.
    public var inTransaction: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    /// The value libpq uses for a connection parameter (e.g. "connect_timeout"), for tests
    /// and diagnostics. Never exposes the password.
    func parameter(_ keyword: String) -> String? {
        guard keyword != "password", let handle, let options = PQconninfo(handle) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let key = option.pointee.keyword {
            if String(cString: key) == keyword { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// Closes the connection. Safe to call more than once.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// The handle, or a `.connection` error when the connection is unusable.
    func liveHandle() throws(PostgresError) -> OpaquePointer {
        guard let handle, !isBroken else {
            throw PostgresError(kind: .connection, message: handle == nil ? "connection is closed" : "connection is broken")
        }
        return handle
    }

    /// Remembers that the session is gone when `error` says so, and passes the error on.
    func noting(_ error: PostgresError) -> PostgresError {
        if error.kind == .connection { sawFatalError = true }
        return error
    }
}
