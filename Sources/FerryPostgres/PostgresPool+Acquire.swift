import FerryBase

/// The pool's bookkeeping, guarded by the pool's `Locked`.
struct PoolState {
    var idle: [PostgresConnection] = []
    var open = 0
    var inUse = 0
    var waiting = 0
    var waits = 0
    var acquireTimeouts = 0
    var connectFailures = 0
    var discarded = 0
    var closed = false
    /// The last failed connection attempt, for the fail-fast window.
    var lastFailure: (at: ContinuousClock.Instant, error: PostgresError)?

    mutating func takeIdle() -> [PostgresConnection] {
        defer { open -= idle.count; idle.removeAll() }
        return idle
    }
}

extension PostgresPool {
    /// What a borrower does once it holds a slot.
    private enum Claim {
        case reuse(PostgresConnection)
        case open
    }

    /// Takes an idle connection or opens one, waiting for a free slot when needed.
    func acquire() throws -> PostgresConnection {
        let deadline = LockDeadline(after: acquireTimeout)
        while true {
            switch try claim(until: deadline) {
            case .reuse(let connection):
                if connection.isUsableAfterIdle(roundTripAfter: idleCheckAfter) { return connection }
                // Found dead before any statement was sent: safe to drop and try again.
                connection.close()
                lock.withLock { state in
                    state.open -= 1
                    state.inUse -= 1
                    state.discarded += 1
                }
                lock.signal()
            case .open:
                do {
                    return try openConnection()
                } catch {
                    lock.withLock { state in
                        state.open -= 1
                        state.inUse -= 1
                        state.connectFailures += 1
                        if let error = error as? PostgresError, error.kind == .connection {
                            state.lastFailure = (.now, error)
                        }
                    }
                    lock.signal()
                    throw error
                }
            }
        }
    }

    /// Reserves an idle connection or a slot to open one, under the lock.
    private func claim(until deadline: LockDeadline) throws(PostgresError) -> Claim {
        var counted = false
        return try lock.withLockWaiting(until: deadline) { (state, wake) throws(PostgresError) -> Claim? in
            if wake != .first { state.waiting -= 1 }
            if state.closed { throw PostgresError(kind: .connection, message: "pool is closed") }
            if let connection = state.idle.popLast() {
                state.inUse += 1
                return .reuse(connection)
            }
            if state.open < size {
                if let failure = state.lastFailure, ContinuousClock.now - failure.at < reconnectBackoff {
                    // Pass the bad news on to the next waiter too, so nobody waits it out.
                    if state.waiting > 0 { lock.signal() }
                    throw failure.error
                }
                state.open += 1
                state.inUse += 1
                return .open
            }
            if wake == .timedOut {
                state.acquireTimeouts += 1
                throw PostgresError(kind: .poolTimeout, message: "no database connection became free within \(acquireTimeout)")
            }
            if !counted {
                state.waits += 1
                counted = true
            }
            state.waiting += 1
            return nil
        }
    }

    /// Opens and prepares a new connection (outside the lock).
    private func openConnection() throws -> PostgresConnection {
        let connection = try PostgresConnection(url: url, preparedStatements: preparedStatements)
        do {
            if let statementTimeoutMs {
                try connection.execute("SET statement_timeout = \(max(0, statementTimeoutMs))")
            }
            try onConnect?(connection)
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Takes a connection back, keeping it only if it is clean and healthy.
    func release(_ connection: PostgresConnection) {
        let healthy = connection.resetForReuse()
        let keep = lock.withLock { state in
            state.inUse -= 1
            guard healthy, !state.closed else {
                state.open -= 1
                if !healthy { state.discarded += 1 }
                return false
            }
            state.idle.append(connection)
            return true
        }
        if !keep { connection.close() }
        lock.signal()
    }
}
