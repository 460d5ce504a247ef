@testable import FerryHTTP
import Testing

/// `ConnectionState.deadline` against `timer`: the loop sleeps until a
/// connection's deadline and only then asks the timer, so the deadline must
/// be exactly when the timer first acts, and nil only where it never would.
@Suite("Connection deadlines")
struct ConnectionDeadlineTests {
    typealias Progress = ConnectionState.Progress

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var state: ConnectionState
        var progress: Progress = .none
        var outputPending = false
        var expected: Double?
        var testDescription: String { name }
    }

    static let limits = ConnectionStateTests.limits

    static let cases: [Case] = {
        var cases: [Case] = []
        let fresh = ConnectionState(limits: limits, now: 100)
        cases.append(Case(name: "idle", state: fresh, expected: 103))
        cases.append(Case(name: "a head without its start", state: fresh, progress: .head, expected: nil))
        cases.append(Case(name: "idle with output pending", state: fresh, outputPending: true, expected: nil))
        var head = fresh
        _ = head.needsInput(.head, now: 100.5)
        cases.append(Case(name: "a slow head", state: head, progress: .head, expected: 101.5))
        var body = fresh
        body.read(100, filledBuffer: false, now: 105)
        cases.append(Case(name: "a stalled body", state: body, progress: .body, expected: 107))
        let handling = ConnectionStateTests.handling()
        cases.append(Case(name: "a worker has the request", state: handling, expected: nil))
        var stalled = handling
        stalled.writeBlocked(now: 100)
        cases.append(Case(name: "a stalled write", state: stalled, outputPending: true, expected: 104))
        var answered = handling
        _ = ConnectionStateTests.answer(&answered, at: 110)
        cases.append(Case(name: "idle after an answer", state: answered, expected: 113))
        var stalledIdle = fresh
        stalledIdle.writeBlocked(now: 100.5)
        cases.append(Case(name: "a write stalled before the idle timeout", state: stalledIdle, expected: 103))
        cases.append(Case(name: "lingering", state: ConnectionStateTests.closing(lingering: true), expected: 102))
        cases.append(Case(name: "closing after its write", state: ConnectionStateTests.closing(lingering: false), expected: nil))
        var parked = handling
        parked.parked()
        cases.append(Case(name: "parked", state: parked, expected: nil))
        var parkedStalled = parked
        parkedStalled.writeBlocked(now: 1_000)
        cases.append(Case(name: "parked with a stalled write", state: parkedStalled, outputPending: true, expected: 1_004))
        return cases
    }()

    @Test(arguments: cases)
    func theDeadlineIsWhenTheTimerFirstActs(_ c: Case) {
        let deadline = c.state.deadline(stopping: false, progress: c.progress, outputPending: c.outputPending)
        #expect(deadline == c.expected)
        func tick(_ now: Double) -> ConnectionState.TimerAction {
            c.state.timer(now: now, stopping: false, progress: c.progress, outputPending: c.outputPending)
        }
        guard let deadline else {
            #expect(tick(1e9) == .none)
            return
        }
        #expect(tick(deadline.nextDown) == .none)
        #expect(tick(deadline) != .none)
    }

    @Test func whileStoppingAnIdleConnectionIsDueAtOnce() {
        let state = ConnectionState(limits: Self.limits, now: 100)
        let deadline = state.deadline(stopping: true, progress: .none, outputPending: false)
        #expect(deadline == 100)
        #expect(state.timer(now: 100, stopping: true, progress: .none, outputPending: false) == .close)
        #expect(state.deadline(stopping: true, progress: .head, outputPending: false) == nil)
    }
}
