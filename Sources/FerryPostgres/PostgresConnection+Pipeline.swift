// Pipelines: several statements in one round trip with libpq's pipeline mode, with or
// without BEGIN … COMMIT around them, one result per statement.

import CLibPQ

extension PostgresConnection {
    /// What each result read back from a pipeline belongs to, in send order.
    private enum Slot {
        case begin
        case prepare(key: PreparedStatementKey, name: String, statement: Int)
        case statement(Int)
        case commit

        /// How many of the caller's statements run from this slot on (at least one): what
        /// its result may wait for, since PostgreSQL sends results at the sync point.
        func statementsFrom(_ statementCount: Int) -> Int {
            switch self {
            case .begin: statementCount + 1
            case .prepare(_, _, let index), .statement(let index): statementCount - index
            case .commit: 1
            }
        }

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
    /// Each result is waited for within `answerTimeout`; a server that does not answer in
    /// time leaves the connection broken and the call throws `.connection`.
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
            let next: OpaquePointer?
            do throws(PostgresError) { next = try nextResult(handle, statements: slot.statementsFrom(statementCount)) } catch {
                record(error, slot)
                return (results, firstError)
            }
            guard let result = next else {
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
            // A COPY result would be followed by another on every call: the session is
            // given up already (`outcome`), so read no further.
            if sawFatalError { return (results, firstError) }
            // (No wait: after a result the NULL that ends it is already at hand.)
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
        let first: OpaquePointer?
        do throws(PostgresError) { first = try nextResult(handle) } catch {
            record(error)
            return
        }
        guard var sync = first else {
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
            var following: OpaquePointer?
            do throws(PostgresError) {
                following = try nextResult(handle)
                if following == nil { following = try nextResult(handle) }
            } catch {
                record(error)
                return
            }
            guard let next = following else {
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
            guard let stray = try? nextResult(handle) else { break }
            PQclear(stray)
        }
        sawFatalError = true
        record(PostgresError.from(connection: handle, fallback: "could not leave pipeline mode"))
    }
}
