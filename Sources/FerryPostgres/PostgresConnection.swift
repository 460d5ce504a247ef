// One libpq connection and everything sent through it: `PostgresConnection`
// (connect, close, liveness of an idle connection), single statements
// (`query`, `execute`), pipelines of `PostgresStatement`s in one round trip,
// transactions, the per-connection prepared-statement cache keyed by
// `PreparedStatementKey`, the C string arrays libpq takes parameters in, and
// `libpqVersion`. What comes back is PostgresResult.swift.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// The server-side name of the connection's `number`th prepared statement.
    static func statementName(_ number: Int) -> String { "stmt_\(number)" }

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - url: a `postgresql://` URL (multi-host URLs included) or a `key=value` conninfo
    ///     string, passed to libpq untouched. `connect_timeout` defaults to 5 seconds
    ///     unless the string sets it.
    ///   - applicationName: the `application_name` the session reports (in `pg_stat_activity`
    ///     and the server's logs) unless the string sets one; nil leaves it to libpq
    ///     (`PGAPPNAME`, else none).
    ///   - preparedStatements: prepare each distinct SQL text once per connection and then
    ///     execute it by name. Off by default, because PgBouncer in transaction mode cannot
    ///     follow named statements across server connections.
    /// - Throws: `PostgresError` of kind `.connection` with libpq's message.
    public init(url: String, applicationName: String? = nil, preparedStatements: Bool = false) throws(PostgresError) {
        usesPreparedStatements = preparedStatements
        // Entries before "dbname" are defaults that the expanded URL/conninfo may override.
        var keywords: [String?] = ["connect_timeout"]
        var values: [String?] = ["5"]
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

/// One SQL statement with text-format parameters, as sent in a pipeline.
public struct PostgresStatement: Sendable, Hashable {
    /// SQL text with `$1`, `$2`… placeholders; exactly one statement.
    public var sql: String
    /// Parameter values in PostgreSQL text format; nil is SQL NULL.
    public var params: [String?]

    /// Creates a statement from SQL and its text-format parameters.
    public init(_ sql: String, _ params: [String?] = []) {
        self.sql = sql
        self.params = params
    }
}

/// The version of the linked libpq, as `PQlibVersion()` reports it (e.g. 150018).
public var libpqVersion: Int { Int(PQlibVersion()) }

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
        let name = Self.statementName(preparedNames.count)
        _ = try consume(PQprepare(handle, name, sql, parameterCount, nil))
        preparedNames[key] = name
        return name
    }
}

extension PostgresConnection {
    /// What each result read back from a pipeline belongs to, in send order.
    private enum Slot {
        case begin
        case prepare(key: PreparedStatementKey, name: String, statement: Int)
        case statement(Int)
        case commit

        /// The caller-facing index reported when this slot fails.
        func errorIndex(statementCount: Int) -> Int? {
            switch self {
            case .begin: nil
            case .prepare(_, _, let index), .statement(let index): index
            case .commit: statementCount
            }
        }
    }

    /// Sends all statements in one round trip using libpq pipeline mode and returns one
    /// result per statement.
    ///
    /// With `transaction` true the statements are wrapped in BEGIN … COMMIT inside the same
    /// pipeline. Without it the server still runs everything up to the sync point as one
    /// implicit transaction. Either way, when a statement fails the later ones are skipped,
    /// nothing is committed, and the error carries `statementIndex`. The connection always
    /// ends idle, outside any transaction and out of pipeline mode.
    ///
    /// Limitation: the connection stays in blocking mode, so a pipeline whose unsent
    /// parameters and unread results both exceed the socket buffers (megabytes) could stall;
    /// keep pipelines to request-sized work.
    public func pipeline(_ statements: [PostgresStatement], transaction: Bool = true) throws(PostgresError) -> [PostgresResult] {
        let handle = try liveHandle()
        guard !statements.isEmpty else { return [] }
        for (index, statement) in statements.enumerated() {
            do throws(PostgresError) { try checkParameters(statement.params) } catch {
                var error = error
                error.statementIndex = index
                throw error
            }
        }
        if transaction, PQtransactionStatus(handle) != PQTRANS_IDLE {
            throw PostgresError(kind: .protocolError, message: "pipeline(transaction: true) called inside an open transaction")
        }
        guard PQenterPipelineMode(handle) == 1 else {
            throw noting(PostgresError.from(connection: handle, fallback: "could not enter pipeline mode"))
        }
        let (slots, sendError) = send(statements, transaction: transaction, handle: handle)
        guard PQpipelineSync(handle) == 1 else {
            sawFatalError = true
            throw PostgresError.from(connection: handle, fallback: "could not send pipeline sync")
        }
        let (results, readError) = readResults(slots, statementCount: statements.count, handle: handle)
        if let readError, readError.kind == .connection { throw readError }
        rollbackIfNeeded()
        if let error = sendError ?? readError { throw error }
        guard results.count == statements.count else {
            sawFatalError = true
            throw PostgresError(kind: .protocolError, message: "pipeline returned \(results.count) results for \(statements.count) statements")
        }
        return results
    }

    /// Queues every command. Stops at the first command libpq refuses to queue.
    private func send(_ statements: [PostgresStatement], transaction: Bool, handle: OpaquePointer) -> ([Slot], PostgresError?) {
        var slots: [Slot] = []
        slots.reserveCapacity(statements.count + 2)
        func refused(_ index: Int?) -> PostgresError {
            var error = noting(PostgresError.from(connection: handle, fallback: "libpq refused to queue a statement"))
            error.statementIndex = index
            return error
        }
        if transaction {
            guard PQsendQueryParams(handle, "BEGIN", 0, nil, nil, nil, nil, 0) == 1 else { return (slots, refused(nil)) }
            slots.append(.begin)
        }
        var pending: [PreparedStatementKey: String] = [:]
        for (index, statement) in statements.enumerated() {
            let count = Int32(statement.params.count)
            let key = PreparedStatementKey(sql: statement.sql)
            // `pending` is empty but for a connection's first use of a statement: skip its lookup.
            var name = usesPreparedStatements ? (preparedNames[key] ?? (pending.isEmpty ? nil : pending[key])) : nil
            if usesPreparedStatements, name == nil, preparedNames.count + pending.count < Self.preparedStatementLimit {
                let newName = Self.statementName(preparedNames.count + pending.count)
                guard PQsendPrepare(handle, newName, statement.sql, count, nil) == 1 else { return (slots, refused(index)) }
                slots.append(.prepare(key: key, name: newName, statement: index))
                pending[key] = newName
                name = newName
            }
            let queued = withCStringArray(statement.params) { values in
                if let name {
                    // withCString: a String passed straight to C is copied into a new array every call.
                    name.withCString { PQsendQueryPrepared(handle, $0, count, values, nil, nil, 0) }
                } else {
                    statement.sql.withCString { PQsendQueryParams(handle, $0, count, nil, values, nil, nil, 0) }
                }
            }
            guard queued == 1 else { return (slots, refused(index)) }
            slots.append(.statement(index))
        }
        if transaction {
            guard PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 0) == 1 else {
                return (slots, refused(statements.count))
            }
            slots.append(.commit)
        }
        return (slots, nil)
    }

    /// Reads one result (then the terminating NULL) per slot, then the sync point, and
    /// leaves pipeline mode. Returns the statement results and the first error seen.
    private func readResults(_ slots: [Slot], statementCount: Int, handle: OpaquePointer) -> ([PostgresResult], PostgresError?) {
        var results: [PostgresResult] = []
        results.reserveCapacity(statementCount)
        var firstError: PostgresError?
        func record(_ error: PostgresError, _ slot: Slot) {
            var error = noting(error)
            error.statementIndex = slot.errorIndex(statementCount: statementCount)
            // A lost connection outranks an ordinary error: it decides what the caller does.
            if firstError == nil || (error.kind == .connection && firstError?.kind != .connection) { firstError = error }
        }
        for slot in slots {
            guard let result = PQgetResult(handle) else {
                record(PostgresError.from(connection: handle, fallback: "pipeline ended early"), slot)
                sawFatalError = true
                return (results, firstError)
            }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_ABORTED {
                // Skipped because an earlier command failed; that failure is already recorded.
            } else {
                do throws(PostgresError) {
                    let value = try outcome(of: result)
                    switch slot {
                    case .statement: results.append(value)
                    case .prepare(let key, let name, _): preparedNames[key] = name
                    case .begin, .commit: break
                    }
                } catch {
                    record(error, slot)
                }
            }
            PQclear(result)
            if PQstatus(handle) != CONNECTION_OK {
                sawFatalError = true
                if firstError?.kind != .connection {
                    record(PostgresError.from(connection: handle, fallback: "connection lost during pipeline"), slot)
                }
                return (results, firstError)
            }
            // Each command's results end with a NULL; anything else before it is unexpected.
            while let extra = PQgetResult(handle) {
                PQclear(extra)
                record(PostgresError(kind: .protocolError, message: "more than one result for a pipelined statement"), slot)
            }
        }
        finishSync(handle, record: { record($0, .commit) })
        return (results, firstError)
    }

    /// Consumes the PGRES_PIPELINE_SYNC result and exits pipeline mode; marks the connection
    /// broken if libpq will not let it go.
    private func finishSync(_ handle: OpaquePointer, record: (PostgresError) -> Void) {
        guard var sync = PQgetResult(handle) else {
            sawFatalError = true
            record(PostgresError.from(connection: handle, fallback: "missing pipeline sync result"))
            return
        }
        // Without BEGIN … COMMIT the implicit transaction commits at the sync point, so a
        // failing commit (a deferred constraint) answers here, before the sync result.
        if PQresultStatus(sync) == PGRES_FATAL_ERROR {
            do throws(PostgresError) { _ = try outcome(of: sync) } catch { record(error) }
            PQclear(sync)
            // The error ends with a NULL, like any command's results; then comes the sync.
            guard let next = PQgetResult(handle) ?? PQgetResult(handle) else {
                sawFatalError = true
                record(PostgresError.from(connection: handle, fallback: "missing pipeline sync result"))
                return
            }
            sync = next
        }
        let status = PQresultStatus(sync)
        PQclear(sync)
        guard status == PGRES_PIPELINE_SYNC else {
            sawFatalError = true
            record(PostgresError(kind: .protocolError, message: "expected pipeline sync, got \(String(cString: PQresStatus(status)))"))
            return
        }
        for _ in 0..<3 {
            if PQexitPipelineMode(handle) == 1 { return }
            if let stray = PQgetResult(handle) { PQclear(stray) }
        }
        sawFatalError = true
        record(PostgresError.from(connection: handle, fallback: "could not leave pipeline mode"))
    }
}

extension PostgresConnection {
    /// Runs `body` between BEGIN and COMMIT, rolling back when `body` or COMMIT throws.
    ///
    /// Nested calls throw `.protocolError` instead of silently committing the outer
    /// transaction. If a statement inside `body` failed and `body` swallowed the error, the
    /// server turns COMMIT into a rollback; that is reported as an error (SQLSTATE 25P02)
    /// rather than as success.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let handle = try liveHandle()
        guard PQtransactionStatus(handle) == PQTRANS_IDLE else {
            throw PostgresError(kind: .protocolError, message: "transaction() called inside an open transaction")
        }
        try execute("BEGIN")
        do {
            let value = try body(self)
            let commit = try query("COMMIT")
            if commit.commandTag == "ROLLBACK" {
                throw PostgresError(
                    kind: .server,
                    message: "transaction was rolled back at COMMIT because a statement in it failed",
                    sqlState: "25P02"
                )
            }
            return value
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }

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

/// Runs `body` with a C array of NUL-terminated copies of `strings` (nil stays a null
/// pointer, which libpq reads as SQL NULL). The copies live only for the call.
///
/// Every statement of every request passes through here, so the copies share one
/// buffer (on the stack when small) instead of one `strdup` each.
func withCStringArray<R, E: Error>(
    _ strings: [String?],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws(E) -> R
) throws(E) -> R {
    var total = 0
    for string in strings { if let string { total += string.utf8.count + 1 } }
    // Small parameter lists (nearly all) live on the stack.
    return try withUnsafeTemporaryAllocation(of: CChar.self, capacity: max(total, 1)) { storage throws(E) -> R in
        try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: max(strings.count, 1)) {
            pointers throws(E) -> R in
            var offset = 0
            for (index, string) in strings.enumerated() {
                guard var string else {
                    pointers[index] = nil
                    continue
                }
                let start = storage.baseAddress! + offset
                let count = string.withUTF8 { utf8 in
                    if let base = utf8.baseAddress { UnsafeMutableRawPointer(start).copyMemory(from: base, byteCount: utf8.count) }
                    return utf8.count
                }
                start[count] = 0
                pointers[index] = UnsafePointer(start)
                offset += count + 1
            }
            return try body(UnsafePointer(pointers.baseAddress!))
        }
    }
}

/// Text-format parameters cannot carry a NUL byte (C strings would silently truncate them), so
/// reject them up front with the code PostgreSQL itself uses for a NUL in text.
func checkParameters(_ params: [String?]) throws(PostgresError) {
    guard params.count <= Int(UInt16.max) else {
        throw PostgresError(kind: .protocolError, message: "too many parameters (\(params.count)); the protocol allows 65535")
    }
    for (offset, param) in params.enumerated() {
        guard var param else { continue }
        // memchr over the contiguous bytes: the generic UTF8View walk was several times slower.
        let hasNUL = param.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return false }
            return memchr(base, 0, utf8.count) != nil
        }
        if hasNUL {
            throw PostgresError(
                kind: .server, message: "parameter $\(offset + 1) contains a NUL byte",
                sqlState: "22021"
            )
        }
    }
}
