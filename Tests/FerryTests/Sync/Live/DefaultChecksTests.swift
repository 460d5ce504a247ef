@testable import Ferry
import Synchronization
import Testing

/// Whose bearer may take another user's default-stream check
/// (``DefaultChecks``), with stand-in tickets, checks and token lookups (no
/// sockets, no database): one the token cache names, or one a bulk lookup
/// vouched for at the check's end (``TokenVouchers``), never one a lookup
/// says nothing of then, nor one revoked since the lookup.
@Suite struct DefaultChecksTests {
    typealias Ticket = WaiterRegistryTests.Ticket

    static let key = DefaultChecks.Key(generation: 1, since: "c9", limit: 500, resources: ["terms", "study_sets"])
    static let set = WaiterRegistry.ScopeKey(scope: "study_sets", id: "S")

    /// A check by `leader` from cursor xid 9 that ended at `endedAt`: one term of set S.
    static func check(by leader: String, endedAt: ContinuousClock.Instant = .now) -> (check: FeedCheck, window: DefaultWindow?) {
        let page = ChangesPage(
            changes: #"[{"resource":"terms","data":{"id":"t10"}}]"#, hasMore: false, cursor: ChangeCursor(afterXID: 10), frontier: 13)
        return (
            FeedCheck(page: page, frontier: 13, held: false, user: leader, scopes: nil),
            DefaultWindowTests.window(terms: [["t10", "S"]], endedAt: endedAt)
        )
    }

    /// Default-stream waiters of `users`, each of whom read set S in a snapshot after the cursor.
    static func waiters(_ registry: WaiterRegistry, _ checks: DefaultChecks, _ users: [String]) -> [String: Ticket] {
        var tickets: [String: Ticket] = [:]
        for user in users {
            tickets[user] = WaiterRegistryTests.waiter(registry, user, sets: ["S"])
            checks.note(user, generation: 1, scopes: [set], owned: [], frontier: 10)
        }
        return tickets
    }

    static func wake(_ registry: WaiterRegistry, xid: UInt64) {
        registry.deliver([ChangeHint(xid: xid, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "S"))])
    }

    /// Alice's check, with her bearer in the cache.
    static func lead(_ checks: DefaultChecks, _ registry: WaiterRegistry, _ ticket: Ticket, endedAt: ContinuousClock.Instant) throws {
        let (_, shared) = try checks.check(
            key, since: 9, token: "token-alice", user: { "alice" }, recheck: { _ in .none }, ticket: ticket, registry: registry,
            run: { check(by: "alice", endedAt: endedAt) })
        #expect(!shared)
    }

    /// The check for `user`'s waiter, whose bearer lapsed from the cache.
    static func take(
        _ checks: DefaultChecks, _ registry: WaiterRegistry, _ ticket: Ticket, _ user: String,
        recheck: (_ recent: [String]) -> TokenVouchers
    ) throws -> (check: FeedCheck, shared: Bool) {
        try checks.check(
            key, since: 9, token: "token-\(user)", user: { nil }, recheck: recheck, ticket: ticket, registry: registry,
            run: { check(by: user) })
    }

    /// The default stream's fan-out whose answers outlast the token cache, as
    /// ``StreamChecksTests/aLookupAfterTheCheckVouchesForAllItsTakersAfterTheCacheLapsed``
    /// for a stream's: the lookup made after the check vouches for its takers
    /// at the check's end, so nobody looks the tokens up again nor checks
    /// alone; an expired token is refused; a lookup that began a lifetime or
    /// more before a check ended, or a revocation since the lookup, vouches
    /// for nobody.
    @Test func aLookupAfterTheCheckVouchesForItsTakersAfterTheCacheLapsedUnlessRevokedOrTooEarly() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let checks = DefaultChecks()
        let users = ["alice", "dora", "fay", "gus", "hal"]
        let tickets = Self.waiters(registry, checks, users)
        Self.wake(registry, xid: 12)
        // Alice's check ended 3 s ago; the answers have taken that long.
        let ended = ContinuousClock.now - .seconds(3)
        try Self.lead(checks, registry, tickets["alice"]!, endedAt: ended)
        // The lookup the first taker makes began after the check ended: its
        // checks stand a second from then, long lapsed now. Hal's token has expired.
        let evictions = Atomic<UInt64>(0)
        let lookups = Atomic<Int>(0)
        let nowMs = TokenCache.wallClockMs()
        let vouchers = TokenVouchers(
            vouchers: Dictionary(
                uniqueKeysWithValues: users.map {
                    ("token-\($0)", TokenVouchers.Voucher(user: $0, until: ended + .seconds(1), expiresAtMs: $0 == "hal" ? nowMs - 1 : .max))
                }),
            generation: 0, currentGeneration: { evictions.load(ordering: .relaxed) }, lookedUp: users.count)
        // Every lookup finds the same: what changes is when the check ended, and the cache's evictions.
        let lookUp = { (_: [String]) -> TokenVouchers in
            lookups.add(1, ordering: .relaxed)
            return vouchers
        }
        var encodings: [EncodedPage] = []
        for user in ["dora", "fay", "gus"] {
            let (check, shared) = try Self.take(checks, registry, tickets[user]!, user, recheck: lookUp)
            #expect(shared, "\(user)")
            #expect(check.user == user)
            encodings.append(try #require(check.page.encoded, "\(user)"))
        }
        // The page others may take was encoded once, by its leader, for all of them.
        #expect(encodings.allSatisfy { $0 === encodings[0] })
        #expect(lookups.load(ordering: .relaxed) == 1)
        #expect(try Self.take(checks, registry, tickets["hal"]!, "hal", recheck: lookUp).shared == false, "an expired token")

        // The next commit's check ended a lifetime or more after the lookup began.
        Self.wake(registry, xid: 15)
        try Self.lead(checks, registry, tickets["alice"]!, endedAt: ended + .seconds(2))
        #expect(try Self.take(checks, registry, tickets["dora"]!, "dora", recheck: lookUp).shared == false)

        // The one after ended within its lifetime, but a token was revoked through this instance since the lookup.
        Self.wake(registry, xid: 18)
        try Self.lead(checks, registry, tickets["alice"]!, endedAt: ended + .milliseconds(500))
        #expect(try Self.take(checks, registry, tickets["fay"]!, "fay", recheck: lookUp).shared)
        evictions.store(1, ordering: .relaxed)
        #expect(try Self.take(checks, registry, tickets["gus"]!, "gus", recheck: lookUp).shared == false)
    }

    /// A device that long-polls is, for part of every round, answered and not
    /// yet back: not a waiter when its token is looked up. Its token is in
    /// the lookup all the same, because it asked lately.
    @Test func theLookupNamesTheTokensThatAskedLately() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let checks = DefaultChecks()
        let tickets = Self.waiters(registry, checks, ["alice", "dora"])
        Self.wake(registry, xid: 12)
        try Self.lead(checks, registry, tickets["alice"]!, endedAt: .now)
        // Alice's long poll is answered: she waits no more, and will be back.
        registry.remove(tickets["alice"]!)
        let looked = Mutex<[String]>([])
        _ = try Self.take(
            checks, registry, tickets["dora"]!, "dora",
            recheck: { recent in
                looked.withLock { $0 = recent.sorted() }
                return .none
            })
        #expect(looked.withLock { $0 } == ["token-alice", "token-dora"])
    }
}
