/// What one bulk lookup of waiting devices' tokens vouched for
/// (`PostgresGateway.recheck(tokens:)`): the user each live token names, and
/// until when its check stands in for the database's, as ``TokenCache``
/// would keep it.
///
/// Why the cache is not enough: a feed check whose page many waiters take
/// (`StreamChecks`) answers each of them as of its snapshot. A taker's token
/// must have been checked within the cache's lifetime before that check, as
/// any request's must have been checked within the lifetime before its
/// handler reads the database. The cache answers "now", and its entries lapse
/// a lifetime after their check. When a fan-out's answers take longer than
/// that (100,000 devices over 8 instances on two cores), each lapse cost
/// another lookup of every token still waiting, and those lookups slowed the
/// answers further (bench/live/README.md, "100,000 over 8 instances"). A
/// voucher answers "at the check's time", so one lookup made after a check
/// serves every waiter that takes it, however long their answers take.
struct TokenVouchers: Sendable {
    /// One live token.
    struct Voucher: Sendable {
        let user: String
        /// Its check stands for checks of the feed that ended before this.
        let until: ContinuousClock.Instant
        /// When the token expires, in ms since the Unix epoch: refused from then on, whatever the check.
        let expiresAtMs: Int64
    }

    let vouchers: [String: Voucher]
    /// The cache's eviction count when the lookup began (``TokenCache/generation``).
    let generation: UInt64
    /// The cache's eviction count now: a token revoked through this process, or
    /// a user disabled on any instance, since the lookup voids every voucher.
    let currentGeneration: @Sendable () -> UInt64
    /// How many tokens the lookup asked PostgreSQL about (the others the cache vouched for).
    let lookedUp: Int

    /// No lookup (no token cache, or a failed lookup): vouches for nobody.
    static let none = TokenVouchers(vouchers: [:], generation: 0, currentGeneration: { 0 }, lookedUp: 0)

    /// The user `hash` names, when its check stood for a check of the feed
    /// that ended at `instant`, and the token has not expired by now.
    func user(for hash: String, checkEndedAt instant: ContinuousClock.Instant, nowMs: Int64 = TokenCache.wallClockMs()) -> String? {
        guard let voucher = vouchers[hash], instant < voucher.until, nowMs < voucher.expiresAtMs, currentGeneration() == generation
        else { return nil }
        return voucher.user
    }
}
