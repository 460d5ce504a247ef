@testable import Ferry
import Synchronization
import Testing

/// What a bulk token lookup vouches for (``TokenVouchers``): a token checked
/// within the cache's lifetime before a feed check ended, unexpired now, and
/// no eviction of the cache since the lookup began.
@Suite struct TokenVouchersTests {
    @Test func aVoucherStandsForChecksThatEndedBeforeItsTimeUnlessExpiredOrEvicted() {
        let checked = ContinuousClock.now - .seconds(10)
        let evictions = Atomic<UInt64>(4)
        let nowMs = TokenCache.wallClockMs()
        let vouchers = TokenVouchers(
            vouchers: [
                "live": .init(user: "dora", until: checked + .seconds(1), expiresAtMs: nowMs + 60_000),
                "expired": .init(user: "fay", until: checked + .seconds(1), expiresAtMs: nowMs - 1),
            ],
            generation: 4, currentGeneration: { evictions.load(ordering: .relaxed) }, lookedUp: 2)
        // A check that ended within the lifetime after the lookup began: long ago, and still so.
        #expect(vouchers.user(for: "live", checkEndedAt: checked + .milliseconds(500)) == "dora")
        // One that ended after it: the lookup says nothing of it.
        #expect(vouchers.user(for: "live", checkEndedAt: checked + .seconds(1)) == nil)
        #expect(vouchers.user(for: "live", checkEndedAt: .now) == nil)
        #expect(vouchers.user(for: "other", checkEndedAt: checked) == nil)
        // An expired token is refused at its expiry, whatever the check.
        #expect(vouchers.user(for: "expired", checkEndedAt: checked) == nil)
        // A revocation through this process (or a user disabled anywhere) since the lookup voids it all.
        evictions.store(5, ordering: .relaxed)
        #expect(vouchers.user(for: "live", checkEndedAt: checked + .milliseconds(500)) == nil)
        #expect(TokenVouchers.none.user(for: "live", checkEndedAt: checked) == nil)
    }
}
