@testable import Ferry
import Synchronization
import Testing

/// When a waiter may take another waiter's check (``SharedChecks``): only the
/// same check, and only one that started at or after the waiter's own epoch
/// (its registration or its latest wake), with stand-in tickets and checks
/// (no sockets, no database).
@Suite struct SharedChecksTests {
    typealias Ticket = WaiterRegistryTests.Ticket

    static let key = SharedChecks.Key(
        credential: "bob's token", generation: 1, walks: .decidedInStatement,
        since: "c1", limit: 500, resources: ["terms"])

    /// A check whose page is empty at `frontier`, so each run can be told apart.
    static func check(_ frontier: UInt64) -> FeedCheck {
        FeedCheck(
            page: ChangesPage(emptyBelow: frontier, request: ChangesRequest(since: .start, limit: 500, resources: ["terms"])),
            frontier: frontier, held: false, user: "bob", scopes: nil)
    }

    /// Runs the check for `ticket`; the run, when there is one, answers `frontier`.
    static func run(
        _ shared: SharedChecks, _ registry: WaiterRegistry, _ ticket: Ticket, key: SharedChecks.Key = key,
        frontier: UInt64
    ) throws -> (frontier: UInt64, shared: Bool) {
        let (check, wasShared) = try shared.check(key, ticket: ticket, registry: registry) { Self.check(frontier) }
        return (check.frontier, wasShared)
    }

    @Test func waitersWokenByOneCommitShareTheFirstCheckAfterIt() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let shared = SharedChecks()
        let tickets = (0..<5).map { _ in WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"]) }
        registry.deliver([ChangeHint(xid: 5, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        #expect(try Self.run(shared, registry, tickets[0], frontier: 10) == (10, false))
        for ticket in tickets.dropFirst() {
            #expect(try Self.run(shared, registry, ticket, frontier: 99) == (10, true))
        }
    }

    @Test func aCheckThatStartedBeforeAWakeNeverAnswersIt() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let shared = SharedChecks()
        let first = WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"])
        let second = WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"])
        #expect(try Self.run(shared, registry, first, frontier: 10) == (10, false))
        // A commit wakes the second waiter after that check began: it needs a check of its own.
        registry.deliver([ChangeHint(xid: 11, table: WaiterRegistryTests.terms, target: .scope(table: WaiterRegistryTests.sets, id: "s1"))])
        #expect(try Self.run(shared, registry, second, frontier: 12) == (12, false))
        // A hint that wakes nobody still moves the epoch: a waiter registered after it may not take a check from before it.
        registry.deliver([ChangeHint(xid: 13, table: WaiterRegistryTests.terms, target: .user("carol"))])
        let third = WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"])
        #expect(try Self.run(shared, registry, third, frontier: 14) == (14, false))
        // Registered with no hint since the last check began: that check answers it.
        let fourth = WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"])
        #expect(try Self.run(shared, registry, fourth, frontier: 99) == (14, true))
    }

    @Test func onlyTheSameCheckIsShared() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let shared = SharedChecks()
        let tickets = (0..<8).map { _ in WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"]) }
        registry.wakeAll()
        #expect(try Self.run(shared, registry, tickets[0], frontier: 10) == (10, false))
        let others = [
            SharedChecks.Key(
                credential: "bob's other token", generation: 1, walks: .decidedInStatement, since: "c1", limit: 500, resources: ["terms"]),
            SharedChecks.Key(credential: "bob's token", generation: 2, walks: .decidedInStatement, since: "c1", limit: 500, resources: ["terms"]),
            SharedChecks.Key(credential: "bob's token", generation: 1, walks: .through(["sets"]), since: "c1", limit: 500, resources: ["terms"]),
            SharedChecks.Key(credential: "bob's token", generation: 1, walks: .decidedInStatement, since: "c0", limit: 500, resources: ["terms"]),
            SharedChecks.Key(credential: "bob's token", generation: 1, walks: .decidedInStatement, since: "c1", limit: 5, resources: ["terms"]),
            // A subscription's question is another question than the default stream's, and than another stream's.
            SharedChecks.Key(
                credential: "bob's token", generation: 1, walks: .decidedInStatement, since: "c1", limit: 500, resources: ["terms"],
                stream: "set:s1"),
            SharedChecks.Key(
                credential: "bob's token", generation: 1, walks: .decidedInStatement, since: "c1", limit: 500, resources: ["terms"],
                stream: "set:s2"),
        ]
        for (index, key) in others.enumerated() {
            #expect(try Self.run(shared, registry, tickets[index + 1], key: key, frontier: UInt64(20 + index)) == (UInt64(20 + index), false))
        }
    }

    @Test func aFailedCheckIsNotOfferedToLaterWaiters() throws {
        struct Refused: Error {}
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let shared = SharedChecks()
        let first = WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"])
        let second = WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"])
        #expect(throws: Refused.self) { _ = try shared.check(Self.key, ticket: first, registry: registry) { throw Refused() } }
        #expect(try Self.run(shared, registry, second, frontier: 10) == (10, false))
    }

    @Test func aWaiterNoLongerRegisteredRunsItsOwn() throws {
        let registry = WaiterRegistryTests.registry(perUser: 100)
        let shared = SharedChecks()
        let first = WaiterRegistryTests.waiter(registry, "bob", sets: ["s1"])
        #expect(try Self.run(shared, registry, first, frontier: 10) == (10, false))
        registry.remove(first)
        #expect(try Self.run(shared, registry, first, frontier: 11) == (11, false))
    }
}
