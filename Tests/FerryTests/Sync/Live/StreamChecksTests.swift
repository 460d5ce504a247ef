@testable import Ferry
import Synchronization
import Testing

/// Who may take another user's stream check (``StreamChecks``), with stand-in
/// tickets and checks (no sockets, no database): a reader with evidence that
/// they read the stream's root after their cursor, whose access did not
/// change; never one without evidence, nor one the guard names.
@Suite struct StreamChecksTests {
    typealias Ticket = WaiterRegistryTests.Ticket

    static let key = StreamChecks.Key(generation: 1, stream: "set:s1", limit: 500, resources: ["sets", "terms"])
    static let root = WaiterRegistry.ScopeKey(scope: "sets", id: "s1")

    static func request(after xid: UInt64) -> ChangesRequest {
        ChangesRequest(since: ChangeCursor(afterXID: xid), limit: 500, resources: ["sets", "terms"])
    }

    /// A check by `leader` from cursor xid `since`: two entries (xids 10 and 12) below frontier 13.
    static func page(
        by leader: String, since: UInt64 = 9, readable: Bool = true, users: Set<String> = [], endedAt: ContinuousClock.Instant = .now
    ) -> SharedStreamPage {
        let page = ChangesPage(
            changes: #"[{"resource":"terms","data":{"id":"t10"}}, {"resource":"terms","data":{"id":"t12"}}]"#, hasMore: false,
            cursor: ChangeCursor(afterXID: 12), frontier: 13)
        return SharedStreamPage(
            since: since, page: page, frontier: 13, held: false,
            entries: SharedStreamPage.entries(of: page, xids: "{10,12}"),
            guardAnswer: StreamGuard(frontier: 14, readable: readable, unchanged: true, users: users), leader: leader, endedAt: endedAt)
    }

    static func waiter(_ registry: WaiterRegistry, _ user: String) -> Ticket {
        let ticket = Ticket()
        #expect(registry.register(ticket, user: user, resources: nil, stream: root) == nil)
        return ticket
    }

    /// The check for `user`'s waiter from cursor `after`; whether it ran its own (`made`) and its page's changes.
    static func run(
        _ checks: StreamChecks, _ registry: WaiterRegistry, _ ticket: Ticket, _ user: String, after: UInt64 = 9,
        own: SharedStreamPage? = nil
    ) throws -> (shared: Bool, changes: String?) {
        let (check, shared) = try checks.check(
            key, request: request(after: after), user: { user }, recheck: { _ in .none }, ticket: ticket, registry: registry,
            run: { own ?? page(by: user, since: after) })
        return (shared, check.page.changes)
    }

    @Test func readersWithEvidenceTakeTheCheckOthersMakeTheirOwn() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let checks = StreamChecks()
        let users = ["alice", "dora", "carol", "bob", "ezra", "fay"]
        var tickets: [String: Ticket] = [:]
        for user in users { tickets[user] = Self.waiter(registry, user) }
        // Their registrations' own checks: Dora, Bob and Fay read the root then; Ezra does not; Carol has made none.
        for user in ["dora", "bob", "fay"] { _ = try Self.run(checks, registry, tickets[user]!, user) }
        _ = try Self.run(checks, registry, tickets["ezra"]!, "ezra", own: Self.page(by: "ezra", readable: false))
        // A commit to the stream wakes them all.
        registry.deliver([ChangeHint(xid: 12, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        #expect(tickets.values.allSatisfy { $0.woken == 1 })
        // Alice's check comes first; Bob's access changed since the cursor.
        #expect(try Self.run(checks, registry, tickets["alice"]!, "alice", own: Self.page(by: "alice", users: ["bob"])).shared == false)
        #expect(try Self.run(checks, registry, tickets["dora"]!, "dora").shared)
        #expect(try Self.run(checks, registry, tickets["carol"]!, "carol").shared == false)
        #expect(try Self.run(checks, registry, tickets["bob"]!, "bob").shared == false)
        #expect(try Self.run(checks, registry, tickets["ezra"]!, "ezra").shared == false)
        // Fay's cursor is after the first entry: the complete page, cut after it.
        let fay = try Self.run(checks, registry, tickets["fay"]!, "fay", after: 11)
        #expect(fay.shared)
        #expect(fay.changes == #"[{"resource":"terms","data":{"id":"t12"}}]"#)
    }

    @Test func lapsedTokensAreLookedUpOnceForAllTheStreamsWaiters() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let checks = StreamChecks()
        let users = ["alice", "dora", "fay", "gus"]
        var tickets: [String: Ticket] = [:]
        for user in users { tickets[user] = Self.waiter(registry, user) }
        for user in users.dropFirst() { _ = try Self.run(checks, registry, tickets[user]!, user) }
        registry.deliver([ChangeHint(xid: 12, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        _ = try Self.run(checks, registry, tickets["alice"]!, "alice")
        // Their tokens' checks lapsed from the cache: the first to find it so looks them all up.
        let cached = Mutex<Set<String>>([])
        let lookups = Atomic<Int>(0)
        for user in users.dropFirst() {
            let (_, shared) = try checks.check(
                Self.key, request: Self.request(after: 9), user: { cached.withLock { $0.contains(user) } ? user : nil },
                recheck: { _ in
                    lookups.add(1, ordering: .relaxed)
                    cached.withLock { $0.formUnion(users) }
                    return .none
                }, ticket: tickets[user]!, registry: registry,
                run: { Self.page(by: user) })
            #expect(shared, "\(user)")
        }
        #expect(lookups.load(ordering: .relaxed) == 1)
    }

    /// A fan-out whose answers outlast the token cache (100,000 devices over 8
    /// instances on two cores took minutes, bench/live/README.md): the tokens
    /// lapse from the cache long before the last waiter takes the page, yet
    /// the lookup made after the check vouches for them at the check's time,
    /// so nobody looks them up again nor checks alone. A lookup that began a
    /// lifetime or more before the check ended vouches for nobody in it.
    @Test func aLookupAfterTheCheckVouchesForAllItsTakersAfterTheCacheLapsed() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let checks = StreamChecks()
        let users = ["alice", "dora", "fay", "gus", "hal"]
        var tickets: [String: Ticket] = [:]
        for user in users { tickets[user] = Self.waiter(registry, user) }
        for user in users.dropFirst() { _ = try Self.run(checks, registry, tickets[user]!, user) }
        registry.deliver([ChangeHint(xid: 12, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        // Alice's check ended 3 s ago; the answers have taken that long.
        let ended = ContinuousClock.now - .seconds(3)
        _ = try checks.check(
            Self.key, request: Self.request(after: 9), user: { "alice" }, recheck: { _ in .none }, ticket: tickets["alice"]!,
            registry: registry, run: { Self.page(by: "alice", endedAt: ended) })
        // The lookup the first taker makes began after the check ended: its
        // checks stand a second from then, long lapsed now, as the cache's do.
        let lookups = Atomic<Int>(0)
        let vouchers = TokenVouchers(
            vouchers: Dictionary(
                uniqueKeysWithValues: users.map { ("token-\($0)", TokenVouchers.Voucher(user: $0, until: ended + .seconds(1), expiresAtMs: .max)) }),
            generation: 0, currentGeneration: { 0 }, lookedUp: users.count)
        for user in users.dropFirst() {
            let (check, shared) = try checks.check(
                Self.key, request: Self.request(after: 9), token: "token-\(user)", user: { nil },
                recheck: { _ in
                    lookups.add(1, ordering: .relaxed)
                    return vouchers
                }, ticket: tickets[user]!, registry: registry, run: { Self.page(by: user) })
            #expect(shared, "\(user)")
            #expect(check.user == user)
        }
        #expect(lookups.load(ordering: .relaxed) == 1)

        // The next commit's check: the only lookup on hand began more than a lifetime before it ended.
        registry.deliver([ChangeHint(xid: 15, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        _ = try checks.check(
            Self.key, request: Self.request(after: 9), user: { "alice" }, recheck: { _ in .none }, ticket: tickets["alice"]!,
            registry: registry, run: { Self.page(by: "alice", endedAt: ended + .seconds(2)) })
        let (_, shared) = try checks.check(
            Self.key, request: Self.request(after: 9), token: "token-dora", user: { nil }, recheck: { _ in .none },
            ticket: tickets["dora"]!, registry: registry, run: { Self.page(by: "dora") })
        #expect(!shared)
    }

    /// A device that long-polls is, for part of every round, answered and not
    /// yet back: not a waiter of the stream when its token is looked up. Its
    /// token is in the lookup all the same, because it asked lately.
    @Test func theLookupNamesTheTokensThatAskedLatelyNotOnlyThoseWaitingNow() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let checks = StreamChecks()
        let alice = Self.waiter(registry, "alice")
        _ = try checks.check(
            Self.key, request: Self.request(after: 9), token: "token-alice", user: { "alice" }, recheck: { _ in .none },
            ticket: alice, registry: registry, run: { Self.page(by: "alice") })
        // Alice's long poll is answered: she waits no more, and will be back.
        registry.remove(alice)
        registry.deliver([ChangeHint(xid: 12, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        let dora = Self.waiter(registry, "dora")
        _ = try checks.check(
            Self.key, request: Self.request(after: 9), token: "token-dora", user: { "dora" }, recheck: { _ in .none },
            ticket: dora, registry: registry, run: { Self.page(by: "dora") })
        // Fay comes back to a lapsed check: the lookup she leads names Alice's token too.
        let fay = Self.waiter(registry, "fay")
        let looked = Mutex<[String]>([])
        _ = try checks.check(
            Self.key, request: Self.request(after: 9), token: "token-fay", user: { nil },
            recheck: { recent in
                looked.withLock { $0 = recent.sorted() }
                return .none
            }, ticket: fay, registry: registry,
            run: { Self.page(by: "fay") })
        #expect(looked.withLock { $0 } == ["token-alice", "token-dora", "token-fay"])
    }

    @Test func aCheckWhoseLeaderLostTheRootOrWhoseRootChangedIsOfferedToNobody() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let checks = StreamChecks()
        let dora = Self.waiter(registry, "dora")
        let alice = Self.waiter(registry, "alice")
        _ = try Self.run(checks, registry, dora, "dora")
        registry.deliver([ChangeHint(xid: 12, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        // Alice's own grant is in her page: it is hers alone.
        _ = try Self.run(checks, registry, alice, "alice", own: Self.page(by: "alice", users: ["alice"]))
        #expect(try Self.run(checks, registry, dora, "dora").shared == false)
        registry.deliver([ChangeHint(xid: 15, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        let changed = SharedStreamPage(
            since: 9, page: Self.page(by: "alice").page, frontier: 13, held: false, entries: [],
            guardAnswer: StreamGuard(frontier: 14, readable: true, unchanged: false, users: []), leader: "alice")
        _ = try Self.run(checks, registry, alice, "alice", own: changed)
        #expect(try Self.run(checks, registry, dora, "dora").shared == false)
    }

    @Test func aStreamWaiterWakesForItsRootRowNotForItsUsersOtherScopes() {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let stream = Self.waiter(registry, "dora")
        let plain = WaiterRegistryTests.waiter(registry, "dora", sets: ["s1", "s2"])
        registry.deliver([ChangeHint(xid: 5, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s2"))])
        #expect(stream.woken == 0)
        #expect(plain.woken == 1)
        registry.deliver([ChangeHint(xid: 6, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        #expect(stream.woken == 1)
        // Her own write, or her access changing, wakes every waiter of hers.
        registry.deliver([ChangeHint(xid: 7, table: 0, target: .user("dora"))])
        #expect(stream.woken == 2)
        #expect(plain.woken == 3)
    }
}
