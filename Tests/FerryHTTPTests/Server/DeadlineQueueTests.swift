@testable import FerryHTTP
import Testing

/// The event loop's deadline heap alone: no sockets, no clock.
@Suite("Deadline queue")
struct DeadlineQueueTests {
    /// Pops everything due at `now`, in order.
    static func drain(_ queue: inout DeadlineQueue, now: Double) -> [Int32] {
        var due: [Int32] = []
        while let key = queue.popDue(now: now) { due.append(key) }
        return due
    }

    @Test func anEmptyQueueHasNothingDue() {
        var queue = DeadlineQueue()
        #expect(queue.earliest == nil)
        #expect(queue.popDue(now: .infinity) == nil)
        #expect(queue.deadline(of: 3) == nil)
        queue.remove(3)
        #expect(queue.count == 0)
    }

    @Test func onlyWhatIsDueComesOutEarliestFirst() {
        var queue = DeadlineQueue()
        for (key, at) in [(Int32(7), 30.0), (2, 10), (9, 20), (4, 40)] { queue.schedule(key, at: at) }
        #expect(queue.earliest == 10)
        #expect(Self.drain(&queue, now: 9.99) == [])
        #expect(Self.drain(&queue, now: 25) == [2, 9])
        #expect(queue.count == 2)
        #expect(queue.earliest == 30)
        #expect(Self.drain(&queue, now: 100) == [7, 4])
    }

    @Test func aKeyHasOneDeadlineWhichMovesEitherWay() {
        var queue = DeadlineQueue()
        queue.schedule(1, at: 10)
        queue.schedule(2, at: 20)
        queue.schedule(1, at: 30)
        #expect(queue.count == 2)
        #expect(queue.deadline(of: 1) == 30)
        #expect(queue.earliest == 20)
        queue.schedule(1, at: 5)
        #expect(queue.earliest == 5)
        #expect(Self.drain(&queue, now: 100) == [1, 2])
    }

    @Test func aRemovedKeyNeverFallsDue() {
        var queue = DeadlineQueue()
        for key in Int32(0)..<8 { queue.schedule(key, at: Double(key)) }
        queue.remove(0)
        queue.remove(5)
        queue.remove(7)
        queue.remove(5)
        #expect(queue.deadline(of: 5) == nil)
        #expect(Self.drain(&queue, now: 100) == [1, 2, 3, 4, 6])
    }

    /// Thousands of random operations against a dictionary: the queue always
    /// agrees on every key's deadline, on the earliest, and on what is due.
    @Test func randomOperationsAgreeWithAPlainDictionary() {
        var generator = Xorshift(seed: 34)
        var queue = DeadlineQueue()
        var model: [Int32: Double] = [:]
        var now = 0.0
        for step in 0..<20_000 {
            let key = Int32(generator.next() % 300)
            switch generator.next() % 10 {
            case 0..<5:
                let at = now + Double(generator.next() % 1000) / 10
                queue.schedule(key, at: at)
                model[key] = at
            case 5..<7:
                queue.remove(key)
                model[key] = nil
            default:
                now += Double(generator.next() % 50) / 10
                let due = Self.drain(&queue, now: now)
                let expected = model.filter { $0.value <= now }
                #expect(Set(due) == Set(expected.keys), "step \(step)")
                // Earliest first: ties may come in either order.
                #expect(due.map { expected[$0]! } == due.map { expected[$0]! }.sorted(), "step \(step)")
                for key in due { model[key] = nil }
            }
            #expect(queue.count == model.count)
            #expect(queue.earliest == model.values.min())
            #expect(queue.deadline(of: key) == model[key])
        }
    }
}

/// xorshift64: a fixed seed, so that a failure reproduces.
private struct Xorshift {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
