// One libpq connection and its session state: `PostgresConnection` (connect, close,
// whether it is usable, liveness of an idle connection and the reset a borrower's
// return gets), how libpq's results become values or errors, the per-connection
// prepared-statement cache keyed by `PreparedStatementKey`, and `libpqVersion`.
// What is sent through it is beside it: single statements (+Query), pipelines
// (+Pipeline), transactions (+Transaction), notifications (+Notifications);
// statements and their parameters are PostgresStatement.swift, results PostgresResult.swift.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibPQ

/// One libpq connection to PostgreSQL. Each call returns when the server has answered;
/// the waiting is bounded by `answerTimeout` (PostgresConnection+Waiting.swift).
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
    /// How long one call waits for each answer from the server (a result, or room to send
    /// more) before it gives the server up: the connection is then broken and the call
    /// throws `.connection`. nil waits without limit. Set it above any `statement_timeout`,
    /// so that a slow statement is ended by the server, and only a server that is frozen or
    /// cut off is given up here.
    public var answerTimeout: Duration? {
        didSet { answerTimeoutMs = answerTimeout.map { Int64($0.components.seconds) * 1000 + $0.components.attoseconds / 1_000_000_000_000_000 } }
    }
    /// `answerTimeout` in milliseconds, as each wait takes it.
    private(set) var answerTimeoutMs: Int64?

    /// The most statements cached per connection; beyond it statements run unnamed.
    static let preparedStatementLimit = 512

    /// The server-side name of the connection's `number`th prepared statement.
    static func statementName(_ number: Int) -> String { "stmt_\(number)" }

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - url: a `postgresql://` URL (multi-host URLs included) or a `key=value` conninfo
    ///     string, passed to libpq untouched. `connect_timeout` is `connectTimeoutSeconds`
    ///     unless the string sets it.
    ///   - applicationName: the `application_name` the session reports (in `pg_stat_activity`
    ///     and the server's logs) unless the string sets one; nil leaves it to libpq
    ///     (`PGAPPNAME`, else none).
    ///   - preparedStatements: prepare each distinct SQL text once per connection and then
    ///     execute it by name. Off by default, because PgBouncer in transaction mode cannot
    ///     follow named statements across server connections.
    ///   - connectTimeoutSeconds: how long connecting may take (libpq's `connect_timeout`,
    ///     per host) unless the string sets it.
    /// - Throws: `PostgresError` of kind `.connection` with libpq's message.
    public init(
        url: String, applicationName: String? = nil, preparedStatements: Bool = false, connectTimeoutSeconds: Int = 5
    ) throws(PostgresError) {
        usesPreparedStatements = preparedStatements
        // Entries before "dbname" are defaults that the expanded URL/conninfo may override.
        var keywords: [String?] = ["connect_timeout"]
        var values: [String?] = [String(max(1, connectTimeoutSeconds))]
        if let applicationName {
            keywords.append("application_name")
            values.append(applicationName)
        }
        keywords += ["dbname", nil]
        values += [url, nil]
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
        // Sends never block inside libpq: a full socket buffer is waited out in
        // `awaitResult`, within `answerTimeout`.
        guard PQsetnonblocking(connection, 1) == 0 else {
            let error = PostgresError.from(connection: connection, fallback: "could not make the connection non-blocking")
            PQfinish(connection)
            handle = nil
            throw PostgresError(kind: .connection, message: error.message)
        }
        // libpq prints notices (e.g. "relation already exists, skipping") to stderr by default;
        // drop them, but notice a FATAL the server sent while the session sat idle (libpq
        // routes those through the notice path), because the session is then gone.
        // Unretained is safe: the receiver is only called from libpq calls made through this
        // object, and `close()` (at the latest in deinit) finishes the PGconn first.
        PQsetNoticeReceiver(
            connection,
            { context, result in
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

    /// The error for a command libpq would not send. The connection is given up: libpq may
    /// hold complete messages of it (a Parse before a Bind it refused) that would go out
    /// ahead of the next command.
    func refusedSend(_ handle: OpaquePointer, _ what: String) -> PostgresError {
        sawFatalError = true
        return PostgresError.from(connection: handle, fallback: "libpq refused to send \(what)")
    }

    /// Remembers that the session is gone when `error` says so, and passes the error on.
    func noting(_ error: PostgresError) -> PostgresError {
        if error.kind == .connection { sawFatalError = true }
        return error
    }
}

/// The version of the linked libpq, as `PQlibVersion()` reports it (e.g. 150018).
public var libpqVersion: Int { Int(PQlibVersion()) }

extension PostgresConnection {
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
}

extension PostgresConnection {
    /// With prepared statements on, the server-side name for `sql`, preparing it on first use.
    /// nil means "run unnamed" (feature off or the per-connection cache is full).
    func preparedName(for sql: String, parameterCount: Int32, handle: OpaquePointer) throws(PostgresError) -> String? {
        guard usesPreparedStatements else { return nil }
        let key = PreparedStatementKey(sql: sql)
        if let name = preparedNames[key] { return name }
        guard preparedNames.count < Self.preparedStatementLimit else { return nil }
        let name = Self.statementName(preparedNames.count)
        guard PQsendPrepare(handle, name, sql, parameterCount, nil) == 1 else { throw refusedSend(handle, "a statement to prepare") }
        _ = try collectResults(handle)
        preparedNames[key] = name
        return name
    }
}

extension PostgresConnection {
    /// Leaves the session idle outside any transaction; marks the connection broken if that
    /// cannot be done, so a pool will not hand out a connection stuck in a transaction.
    func rollbackIfNeeded() {
        guard let handle, !isBroken else { return }
        switch PQtransactionStatus(handle) {
        case PQTRANS_IDLE:
            return
        case PQTRANS_INTRANS, PQTRANS_INERROR:
            do { try execute("ROLLBACK") } catch { sawFatalError = true }
            if PQtransactionStatus(handle) != PQTRANS_IDLE { sawFatalError = true }
        default:
            sawFatalError = true
        }
    }
}

extension PostgresConnection {
    /// Whether an idle connection can still be used, checked without a round trip.
    ///
    /// An idle session should have nothing to read. If the socket is readable, the server
    /// sent something unprompted, usually a FATAL "terminating connection" before closing
    /// (restart, `pg_terminate_backend`, idle timeout); libpq then reports the connection
    /// bad once the input is consumed. After `roundTripAfter` of idleness a silent network
    /// loss is possible too, so an empty query confirms the server still answers.
    func isUsableAfterIdle(roundTripAfter: Duration) -> Bool {
        guard let handle, !isBroken else { return false }
        // A FATAL message and the end of the stream can arrive in separate reads, so keep
        // consuming while the socket stays readable (bounded, in case of a notification flood).
        for _ in 0..<4 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 0)
            if ready < 0 { return false }
            if ready == 0 { break }
            if PQconsumeInput(handle) == 0 || isBroken { return false }
            while let notification = PQnotifies(handle) { PQfreemem(notification) }
            if PQisBusy(handle) != 0 { return false }
        }
        guard ContinuousClock.now - idleSince >= roundTripAfter else { return true }
        do { try execute("") } catch { return false }
        return !isBroken
    }

    /// Readies a connection that a borrower hands back: no open transaction, no pipeline,
    /// nothing in flight. Returns false when it must be discarded instead.
    func resetForReuse() -> Bool {
        guard let handle, !isBroken else { return false }
        if PQpipelineStatus(handle) != PQ_PIPELINE_OFF || PQisBusy(handle) != 0 { return false }
        rollbackIfNeeded()
        idleSince = .now
        return !isBroken
    }
}

/// The per-connection prepared-statement cache's key: the SQL text, hashed by its
/// length and its first and last bytes rather than all of it.
///
/// Every pipelined statement is looked up in that cache, and an application's statements run
/// to hundreds of bytes; hashing all of them was a visible share of a GET's CPU.
/// Equality still compares the whole text, so two statements that share a hash
/// only cost a longer probe, never a wrong statement.
struct PreparedStatementKey: Hashable {
    /// How many leading and trailing bytes go into the hash.
    static let hashedEdge = 48

    let sql: String

    static func == (lhs: PreparedStatementKey, rhs: PreparedStatementKey) -> Bool { lhs.sql == rhs.sql }

    func hash(into hasher: inout Hasher) {
        var sql = sql
        sql.withUTF8 { utf8 in
            hasher.combine(utf8.count)
            guard utf8.count > 2 * Self.hashedEdge else {
                hasher.combine(bytes: UnsafeRawBufferPointer(utf8))
                return
            }
            let raw = UnsafeRawBufferPointer(utf8)
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw.prefix(Self.hashedEdge)))
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw.suffix(Self.hashedEdge)))
        }
    }
}
