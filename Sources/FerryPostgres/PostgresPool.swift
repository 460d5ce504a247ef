// The connection pool: `PostgresPool` lends connections to worker threads
// (`withConnection`), opens them lazily up to its size, makes borrowers wait a
// bounded time, fails fast while PostgreSQL is down and replaces dead
// connections; `PoolState` is its bookkeeping under the lock and `PoolStats`
// the snapshot of its counters.

import FerryBase

/// A bounded pool of `PostgresConnection`s for worker threads.
///
/// Connections open lazily, up to `size`. A borrower that finds them all in use waits up to
/// `acquireTimeout` and then gets `.poolTimeout`; it never hangs. While PostgreSQL is down,
/// borrowers fail fast with `.connection` instead of waiting: after a failed connection
/// attempt, further attempts within `reconnectBackoff` fail at once with the same error.
/// But while other connections are open, a failed opening (out of descriptors, say, or
/// PostgreSQL out of slots) makes the borrower wait for one of them instead.
/// Broken connections are discarded when returned, and idle ones found dead are replaced
/// before any statement is sent, so the pool recovers by itself when PostgreSQL returns.
public final class PostgresPool: Sendable {
    /// The most connections this pool opens.
    public let size: Int
    /// How long a borrower waits for a free connection.
    public let acquireTimeout: Duration
    /// `statement_timeout` set on each new connection, in milliseconds; nil leaves the
    /// server default.
    public let statementTimeoutMs: Int?
    /// Each connection's `answerTimeout`: how long a call waits for the server to answer
    /// before the connection is given up; nil waits without limit.
    public let answerTimeout: Duration?
    /// Whether connections cache named prepared statements (see `PostgresConnection.init`).
    public let preparedStatements: Bool
    /// The `application_name` of the pool's sessions, unless the URL sets one; nil for libpq's default.
    public let applicationName: String?
    /// After a failed connection attempt, new attempts within this window fail immediately.
    public let reconnectBackoff: Duration
    /// An idle connection older than this is checked with a round trip before reuse.
    public let idleCheckAfter: Duration

    let url: String
    let onConnect: (@Sendable (PostgresConnection) throws -> Void)?
    let lock: Locked<PoolState>

    /// Creates a pool; no connection is opened until first use.
    ///
    /// - Parameters:
    ///   - url: libpq URL or conninfo string (see `PostgresConnection.init(url:preparedStatements:)`).
    ///   - size: the most connections open at once (at least 1).
    ///   - acquireTimeout: how long a borrower waits when every connection is busy.
    ///   - statementTimeoutMs: applied with `SET statement_timeout` after connecting (a SET
    ///     rather than startup `options`, which PgBouncer rejects).
    ///   - answerTimeout: each connection's `answerTimeout` (keep it above
    ///     `statementTimeoutMs`, so that only a frozen or unreachable server meets it).
    ///   - preparedStatements: cache named prepared statements per connection.
    ///   - applicationName: the `application_name` each session reports unless `url` sets one.
    ///   - reconnectBackoff: fail-fast window after a failed connection attempt.
    ///   - idleCheckAfter: idle time after which reuse is preceded by a round-trip check.
    ///   - onConnect: runs once on each new connection after the statement timeout is set;
    ///     if it throws, the connection is closed and the borrower gets the error.
    public init(
        url: String, size: Int, acquireTimeout: Duration, statementTimeoutMs: Int?,
        answerTimeout: Duration? = nil,
        preparedStatements: Bool = false,
        applicationName: String? = nil,
        reconnectBackoff: Duration = .milliseconds(250),
        idleCheckAfter: Duration = .seconds(30),
        onConnect: (@Sendable (PostgresConnection) throws -> Void)? = nil
    ) {
        self.url = url
        self.size = max(1, size)
        self.acquireTimeout = acquireTimeout
        self.statementTimeoutMs = statementTimeoutMs
        self.answerTimeout = answerTimeout
        self.preparedStatements = preparedStatements
        self.applicationName = applicationName
        self.reconnectBackoff = reconnectBackoff
        self.idleCheckAfter = idleCheckAfter
        self.onConnect = onConnect
        self.lock = Locked(PoolState())
    }

    deinit {
        for connection in lock.withLock({ state in state.takeIdle() }) { connection.close() }
    }

    /// Borrows a connection for the duration of `body` and takes it back afterwards.
    ///
    /// `body` must not keep the connection after it returns. If `body` leaves a transaction
    /// open it is rolled back; a connection that broke during `body` is discarded and
    /// replaced lazily. Statements are never retried here: the caller decides.
    ///
    /// - Parameter answerLimit: a tighter `answerTimeout` for this borrower, the idle
    ///   connection's liveness check included (a health probe that must answer before its
    ///   checker gives up); nil keeps the pool's.
    /// - Throws: `PostgresError` `.poolTimeout` when no connection frees up within
    ///   `acquireTimeout`; `.connection` when PostgreSQL cannot be reached; whatever
    ///   `body` or `onConnect` throws.
    public func withConnection<T>(answerLimit: Duration? = nil, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard let connection = try acquire(waiting: true, answerLimit: answerLimit) else {
            throw PostgresError(kind: .poolTimeout, message: "no database connection became free")
        }
        defer { release(connection) }
        return try body(connection)
    }

    /// Borrows a connection for `body` only if one is idle or a slot is free to open
    /// one: never waits. nil, with `body` not run, when every slot is in use. For a
    /// borrower that holds a connection already: waiting for a second could leave
    /// every slot held by borrowers waiting for each other until their timeouts.
    public func withFreeConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T? {
        guard let connection = try acquire(waiting: false) else { return nil }
        defer { release(connection) }
        return try body(connection)
    }

    /// Borrows a connection for `body` only if one is idle now: never opens one and
    /// never waits. nil, with `body` not run, when none is idle. For background work
    /// that can wait for a quieter moment and must never take a request's slot, or
    /// open a connection a request then lacks (descriptors exhausted, say).
    public func withIdleConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T? {
        let idle: PostgresConnection? = lock.withLock { state in
            guard !state.closed, let connection = state.idle.popLast() else { return nil }
            state.inUse += 1
            return connection
        }
        guard let connection = idle else { return nil }
        defer { release(connection) }
        return try body(connection)
    }

    /// A snapshot of the pool's counters.
    public var stats: PoolStats {
        lock.withLock { state in
            PoolStats(
                size: size, open: state.open, inUse: state.inUse, waiting: state.waiting,
                waits: state.waits, acquireTimeouts: state.acquireTimeouts,
                connectFailures: state.connectFailures, discarded: state.discarded
            )
        }
    }

    /// Closes idle connections and makes later borrowers fail with `.connection`.
    /// Connections in use are closed when they are returned.
    public func close() {
        let idle = lock.withLock { state in
            state.closed = true
            return state.takeIdle()
        }
        lock.broadcast()
        for connection in idle { connection.close() }
    }
}

/// A snapshot of a pool's counters, for metrics and tests.
public struct PoolStats: Sendable, Hashable {
    /// The most connections the pool will open.
    public var size: Int
    /// Connections currently open or being opened (idle plus in use).
    public var open: Int
    /// Connections currently lent to a borrower.
    public var inUse: Int
    /// Borrowers currently waiting for a connection.
    public var waiting: Int
    /// Total times a borrower had to wait because every connection was in use.
    public var waits: Int
    /// Total acquisitions that gave up with `.poolTimeout`.
    public var acquireTimeouts: Int
    /// Total connection attempts that failed.
    public var connectFailures: Int
    /// Total connections thrown away because they were broken (found dead or failed in use).
    public var discarded: Int
}

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
        /// Every slot is in use and the borrower does not wait.
        case busy
    }

    /// Takes an idle connection or opens one, waiting for a free slot when needed and
    /// `waiting`; nil when every slot is in use and not `waiting`. `answerLimit` tightens
    /// the connection's `answerTimeout` until it is released.
    func acquire(waiting: Bool, answerLimit: Duration? = nil) throws -> PostgresConnection? {
        let deadline = LockDeadline(after: acquireTimeout)
        while true {
            switch try claim(until: deadline, waiting: waiting) {
            case .busy:
                return nil
            case .reuse(let connection):
                if answerLimit != nil { connection.answerTimeout = Self.tighter(answerTimeout, answerLimit) }
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
                    return try openConnection(answerLimit: answerLimit)
                } catch {
                    let othersOpen = lock.withLock { state in
                        state.open -= 1
                        state.inUse -= 1
                        state.connectFailures += 1
                        guard let error = error as? PostgresError, error.kind == .connection else { return false }
                        state.lastFailure = (.now, error)
                        return state.open > 0
                    }
                    lock.signal()
                    // Connections still open mean PostgreSQL is up and only this one could not
                    // be had (descriptors or server slots exhausted): wait for one of them.
                    if othersOpen { continue }
                    throw error
                }
            }
        }
    }

    /// Reserves an idle connection or a slot to open one, under the lock.
    private func claim(until deadline: LockDeadline, waiting: Bool) throws(PostgresError) -> Claim {
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
                    guard state.open > 0 else {
                        // Pass the bad news on to the next waiter too, so nobody waits it out.
                        if state.waiting > 0 { lock.signal() }
                        throw failure.error
                    }
                    // Opening just failed but connections are open: wait for one of those below.
                } else {
                    state.open += 1
                    state.inUse += 1
                    return .open
                }
            }
            if !waiting { return .busy }
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

    /// Opens and prepares a new connection (outside the lock). Under a borrower's
    /// `answerLimit`, connecting may take no longer than that either (whole seconds, as
    /// libpq counts them).
    private func openConnection(answerLimit: Duration?) throws -> PostgresConnection {
        let connectSeconds = answerLimit.map { Int(($0 + .milliseconds(999)).components.seconds) } ?? 5
        let connection = try PostgresConnection(
            url: url, applicationName: applicationName, preparedStatements: preparedStatements,
            connectTimeoutSeconds: min(5, connectSeconds))
        // The borrower's limit from the first statement on: a server that stops answering
        // just after it accepted the connection holds a probe no longer than that.
        connection.answerTimeout = Self.tighter(answerTimeout, answerLimit)
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

    /// The shorter of two limits, nil (none) only when both are.
    static func tighter(_ one: Duration?, _ other: Duration?) -> Duration? {
        guard let one else { return other }
        guard let other else { return one }
        return min(one, other)
    }

    /// Takes a connection back, keeping it only if it is clean and healthy.
    func release(_ connection: PostgresConnection) {
        // A borrower's tighter limit (`answerLimit`) ends with its borrowing.
        if connection.answerTimeout != answerTimeout { connection.answerTimeout = answerTimeout }
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
