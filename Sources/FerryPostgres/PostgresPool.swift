import FerryBase

/// A bounded pool of `PostgresConnection`s for worker threads.
///
/// Connections open lazily, up to `size`. A borrower that finds them all in use waits up to
/// `acquireTimeout` and then gets `.poolTimeout`; it never hangs. While PostgreSQL is down,
/// borrowers fail fast with `.connection` instead of waiting: after a failed connection
/// attempt, further attempts within `reconnectBackoff` fail at once with the same error.
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
    /// Whether connections cache named prepared statements (see `PostgresConnection.init`).
    public let preparedStatements: Bool
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
    ///   - preparedStatements: cache named prepared statements per connection.
    ///   - reconnectBackoff: fail-fast window after a failed connection attempt.
    ///   - idleCheckAfter: idle time after which reuse is preceded by a round-trip check.
    ///   - onConnect: runs once on each new connection after the statement timeout is set;
    ///     if it throws, the connection is closed and the borrower gets the error.
    public init(
        url: String, size: Int, acquireTimeout: Duration, statementTimeoutMs: Int?,
        preparedStatements: Bool = false,
        reconnectBackoff: Duration = .milliseconds(250),
        idleCheckAfter: Duration = .seconds(30),
        onConnect: (@Sendable (PostgresConnection) throws -> Void)? = nil
    ) {
        self.url = url
        self.size = max(1, size)
        self.acquireTimeout = acquireTimeout
        self.statementTimeoutMs = statementTimeoutMs
        self.preparedStatements = preparedStatements
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
    /// - Throws: `PostgresError` `.poolTimeout` when no connection frees up within
    ///   `acquireTimeout`; `.connection` when PostgreSQL cannot be reached; whatever
    ///   `body` or `onConnect` throws.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try acquire()
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
