@testable import Ferry
import Synchronization
import Testing

/// Which waiters a hint wakes, the limits, and the frontier's wakes, with
/// stand-in tickets that count their wakes (no sockets, no database).
@Suite struct WaiterRegistryTests {
    final class Ticket: LiveTicket {
        let wakes = Atomic<Int>(0)
        private let abandonment = Mutex<(@Sendable () -> Void)?>(nil)
        func wake() { wakes.add(1, ordering: .relaxed) }
        func whenAbandoned(_ body: @escaping @Sendable () -> Void) { abandonment.withLock { $0 = body } }
        func abandon() { abandonment.withLock { $0 }?() }
        var woken: Int { wakes.load(ordering: .relaxed) }
    }

    static let sets: UInt32 = 100, terms: UInt32 = 101, folders: UInt32 = 102

    static func registry(perInstance: Int = 100, perUser: Int = 10) -> WaiterRegistry {
        let registry = WaiterRegistry(limits: .init(perInstance: perInstance, perUser: perUser))
        registry.setTables([sets: "sets", terms: "terms", folders: "folders"], scopeTables: ["sets"])
        return registry
    }

    /// A waiter for `user`, named, with the scope rows `scopes` (set ids) loaded.
    static func waiter(_ registry: WaiterRegistry, _ user: String, sets: [String]?, resources: Set<String>? = nil) -> Ticket {
        let ticket = Ticket()
        #expect(registry.register(ticket, user: nil, resources: resources) == nil)
        #expect(registry.identify(ticket, user: user, scopes: sets.map { Set($0.map { .init(scope: "sets", id: $0) }) }))
        return ticket
    }

    @Test func aWriteWakesItsWriterAndTheReadersOfItsScopeOnly() {
        let registry = Self.registry()
        let alice = Self.waiter(registry, "alice", sets: ["s1"])
        let bob = Self.waiter(registry, "bob", sets: ["s1", "s2"])
        let carol = Self.waiter(registry, "carol", sets: ["s3"])
        // Alice edits a term of s1: her hint and the scope's.
        registry.deliver([
            ChangeHint(xid: 5, table: Self.terms, target: .user("alice")),
            ChangeHint(xid: 5, table: Self.terms, target: .scope(table: Self.sets, id: "s1")),
        ])
        #expect((alice.woken, bob.woken, carol.woken) == (1, 1, 0))
        registry.deliver([ChangeHint(xid: 6, table: Self.terms, target: .scope(table: Self.sets, id: "s3"))])
        #expect((alice.woken, bob.woken, carol.woken) == (1, 1, 1))
        // A write by nobody the feed knows (psql): everyone following the table.
        registry.deliver([ChangeHint(xid: 7, table: Self.folders, target: .everyone)])
        #expect((alice.woken, bob.woken, carol.woken) == (2, 2, 2))
    }

    @Test func aWaiterOnSeveralStreamsIsWokenByAnyAndTakesTheOnesThatMayHaveNews() {
        let registry = Self.registry()
        let s1 = WaiterRegistry.ScopeKey(scope: "sets", id: "s1"), s2 = WaiterRegistry.ScopeKey(scope: "sets", id: "s2")
        let folder = WaiterRegistry.ScopeKey(scope: "folders", id: "f1")
        // Bob waits on his default stream (he reads s9) and on the streams of s1, s2 and a folder.
        let bob = Ticket()
        #expect(registry.register(bob, user: nil, resources: nil, streams: [s1, s2, folder], followsDefault: true) == nil)
        #expect(registry.identify(bob, user: "bob", scopes: [.init(scope: "sets", id: "s9")]))
        #expect(registry.count == 1)
        _ = registry.takeCandidates(bob)
        // A term of s1: that stream, and the folder's (a set may hang below a folder); not s2's, nor his default stream.
        registry.deliver([ChangeHint(xid: 5, table: Self.terms, target: .scope(table: Self.sets, id: "s1"))])
        #expect(bob.woken == 1)
        #expect(registry.takeCandidates(bob) == [s1, folder])
        #expect(registry.takeCandidates(bob) == [])
        // A set he reads: his default stream; and a set no stream of his roots at: the folder's, below which it may hang.
        registry.deliver([ChangeHint(xid: 6, table: Self.terms, target: .scope(table: Self.sets, id: "s9"))])
        #expect(bob.woken == 2)
        #expect(registry.takeCandidates(bob) == [nil, folder])
        // Nothing of his: asleep.
        registry.deliver([ChangeHint(xid: 7, table: Self.terms, target: .user("alice"))])
        #expect(bob.woken == 2 && registry.takeCandidates(bob) == [])
        // His own write, or a wake of everyone: every stream; they gather until taken.
        registry.deliver([ChangeHint(xid: 8, table: Self.terms, target: .scope(table: Self.sets, id: "s2"))])
        registry.deliver([ChangeHint(xid: 9, table: Self.terms, target: .user("bob"))])
        #expect(bob.woken == 4)
        #expect(registry.takeCandidates(bob) == [nil, s1, s2, folder])
        registry.wakeAll()
        #expect(registry.takeCandidates(bob) == [nil, s1, s2, folder])
        // A stream whose check could not run stays to check; a hold joins the lowest frontier.
        registry.note(bob, candidate: s2)
        #expect(registry.takeCandidates(bob) == [s2])
        registry.hold(bob, below: 50)
        registry.holdAlso(bob, below: 70)
        #expect(registry.lowestHeld == 50)
        registry.frontierPassed(51)
        #expect(bob.woken == 6 && registry.takeCandidates(bob) == [nil, s1, s2, folder])
        // A long poll of one stream keeps no candidates: it checks its stream.
        let carol = Ticket()
        #expect(registry.register(carol, user: "carol", resources: nil, stream: s1) == nil)
        registry.deliver([ChangeHint(xid: 10, table: Self.terms, target: .scope(table: Self.sets, id: "s1"))])
        #expect(carol.woken == 1 && registry.takeCandidates(carol) == [])
    }

    @Test func aWaiterFollowingOtherResourcesSleepsOn() {
        let registry = Self.registry()
        let folders = Self.waiter(registry, "alice", sets: [], resources: ["folders"])
        registry.deliver([
            ChangeHint(xid: 5, table: Self.terms, target: .user("alice")),
            ChangeHint(xid: 5, table: Self.terms, target: .everyone),
        ])
        #expect(folders.woken == 0)
        // Access gained or lost (table 0) concerns every resource; so does a table not known yet.
        registry.deliver([ChangeHint(xid: 6, table: 0, target: .user("alice"))])
        registry.deliver([ChangeHint(xid: 7, table: 999, target: .user("alice"))])
        #expect(folders.woken == 2)
    }

    @Test func untilItsScopesAreKnownEveryScopeHintConcernsAUser() {
        let registry = Self.registry()
        let alice = Self.waiter(registry, "alice", sets: nil)
        #expect(registry.needsScopes("alice"))
        registry.deliver([ChangeHint(xid: 5, table: Self.terms, target: .scope(table: Self.sets, id: "anything"))])
        #expect(alice.woken == 1)
        #expect(registry.identify(alice, user: "alice", scopes: [.init(scope: "sets", id: "s1")]))
        #expect(!registry.needsScopes("alice"))
        registry.deliver([ChangeHint(xid: 6, table: Self.terms, target: .scope(table: Self.sets, id: "anything"))])
        #expect(alice.woken == 1)
    }

    @Test func gainingAccessOrWritingAScopeTableForgetsTheScopes() {
        let registry = Self.registry()
        let bob = Self.waiter(registry, "bob", sets: ["s1"])
        // A term write keeps them.
        registry.deliver([ChangeHint(xid: 5, table: Self.terms, target: .user("bob"))])
        #expect(!registry.needsScopes("bob"))
        // A new set of his own may be a scope he now reads: reload.
        registry.deliver([ChangeHint(xid: 6, table: Self.sets, target: .user("bob"))])
        #expect(registry.needsScopes("bob"))
        #expect(registry.identify(bob, user: "bob", scopes: [.init(scope: "sets", id: "s1")]))
        // Shared with him (a grant, table 0): reload.
        registry.deliver([ChangeHint(xid: 7, table: 0, target: .user("bob"))])
        #expect(registry.needsScopes("bob"))
        #expect(bob.woken == 3)
    }

    @Test func aWaiterNotYetNamedIsWokenByEveryHint() {
        let registry = Self.registry()
        let unknown = Ticket()
        #expect(registry.register(unknown, user: nil, resources: nil) == nil)
        registry.deliver([ChangeHint(xid: 5, table: Self.terms, target: .user("someone else"))])
        #expect(unknown.woken == 1)
    }

    @Test func limitsPerInstanceAndPerUser() {
        let registry = Self.registry(perInstance: 3, perUser: 2)
        _ = Self.waiter(registry, "alice", sets: [])
        _ = Self.waiter(registry, "alice", sets: [])
        // Named at once (a cached token): refused at once.
        #expect(registry.register(Ticket(), user: "alice", resources: nil) == .userFull)
        // Named by its check: refused then, and forgotten.
        let late = Ticket()
        #expect(registry.register(late, user: nil, resources: nil) == nil)
        #expect(!registry.identify(late, user: "alice", scopes: nil))
        #expect(registry.count == 2)
        _ = Self.waiter(registry, "bob", sets: [])
        #expect(registry.register(Ticket(), user: "carol", resources: nil) == .instanceFull)
    }

    @Test func heldWaitersWakeOnceTheFrontierPassesThem() {
        let registry = Self.registry()
        let early = Self.waiter(registry, "alice", sets: [])
        let late = Self.waiter(registry, "bob", sets: [])
        registry.hold(early, below: 100)
        registry.hold(late, below: 120)
        #expect(registry.lowestHeld == 100)
        registry.frontierPassed(100)
        #expect((early.woken, late.woken) == (0, 0))
        registry.frontierPassed(101)
        #expect((early.woken, late.woken) == (1, 0))
        #expect(registry.lowestHeld == 120)
        registry.frontierPassed(500)
        #expect((early.woken, late.woken) == (1, 1))
        #expect(registry.lowestHeld == nil)
    }

    @Test func removedAndAbandonedWaitersAreForgottenWithTheirUsers() {
        let registry = Self.registry()
        let alice = Self.waiter(registry, "alice", sets: ["s1"])
        let bob = Self.waiter(registry, "bob", sets: ["s1"])
        registry.hold(bob, below: 10)
        registry.remove(alice)
        bob.abandon()
        #expect(registry.count == 0)
        #expect(registry.lowestHeld == nil)
        registry.deliver([ChangeHint(xid: 5, table: Self.terms, target: .scope(table: Self.sets, id: "s1"))])
        registry.wakeAll()
        #expect((alice.woken, bob.woken) == (0, 0))
        // A new waiter of the same user starts with no scopes.
        #expect(registry.needsScopes("alice"))
    }
}
