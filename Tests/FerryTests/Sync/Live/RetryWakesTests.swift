@testable import Ferry
import Testing

/// The retries the listener's loop serves after a failed check: who is due when, and
/// that one pass wakes every due waiter once (no sockets, no database).
@Suite struct RetryWakesTests {
    typealias Ticket = WaiterRegistryTests.Ticket

    @Test func aRetryWakesItsWaiterOnceWhenDueAndNotBefore() {
        let retries = RetryWakes()
        let alice = Ticket()
        #expect(retries.add(alice, at: 10))
        #expect(retries.nextDue == 10)
        retries.wakeDue(now: 9.5)
        #expect(alice.woken == 0)
        retries.wakeDue(now: 10)
        #expect(alice.woken == 1)
        #expect(retries.nextDue == nil)
        #expect(retries.count == 0)
        retries.wakeDue(now: 20)
        #expect(alice.woken == 1)
    }

    @Test func onePassWakesEveryDueWaiterAndKeepsTheRestWithTheNextTime() {
        let retries = RetryWakes()
        let tickets = (0..<100).map { _ in Ticket() }
        for (index, ticket) in tickets.enumerated() { retries.add(ticket, at: Double(index % 2 == 0 ? 1 : 3)) }
        #expect(retries.count == 100)
        retries.wakeDue(now: 2)
        #expect(tickets.enumerated().allSatisfy { $0.element.woken == ($0.offset % 2 == 0 ? 1 : 0) })
        #expect(retries.nextDue == 3)
        retries.wakeDue(now: 3)
        #expect(tickets.allSatisfy { $0.woken == 1 })
        #expect(retries.nextDue == nil)
    }

    @Test func aWaiterRetriedTwiceKeepsItsEarlierTimeAndOnlyAnEarlierOneCutsTheWaitShort() {
        let retries = RetryWakes()
        let alice = Ticket(), bob = Ticket()
        #expect(retries.add(alice, at: 5))
        // Later than the earliest: the listener's wait need not be cut short.
        #expect(!retries.add(bob, at: 7))
        #expect(!retries.add(alice, at: 9))
        #expect(retries.nextDue == 5)
        // Earlier than every other: it must be.
        #expect(retries.add(bob, at: 4))
        #expect(retries.count == 2)
        retries.wakeDue(now: 4.5)
        #expect(bob.woken == 1)
        #expect(alice.woken == 0)
        retries.removeAll()
        retries.wakeDue(now: 100)
        #expect(alice.woken == 0)
        #expect(retries.nextDue == nil)
    }
}
