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
