@testable import FerryKit
import Foundation
import Testing

/// Continuous mode's decisions (``LivePlan``), from values alone: what runs
/// next after each thing that can happen, at fixed times.
@Suite struct LivePlanTests {
    let t0 = Date(timeIntervalSince1970: 1_000_000)
    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    @Test func startsWithARoundThenListensWithNoDeadline() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        #expect(plan.next(now: t0) == .round)
        plan.roundSucceeded()
        #expect(plan.next(now: at(1)) == .wait(until: nil, listening: true))
    }

    @Test func writesInTheUploadDelayAfterTheFirstGoInOneRound() {
        var plan = LivePlan(uploadDelay: 0.5, now: t0)
        plan.roundSucceeded()
        plan.wrote(now: at(10))
        // The long poll stays open until the upload is due.
        #expect(plan.next(now: at(10)) == .wait(until: at(10.5), listening: true))
        plan.wrote(now: at(10.3))
        plan.wrote(now: at(10.4))
        // Later writes do not push the first one's upload back.
        #expect(plan.next(now: at(10.4)) == .wait(until: at(10.5), listening: true))
        #expect(plan.next(now: at(10.5)) == .round)
        plan.roundSucceeded()
        #expect(plan.next(now: at(10.6)) == .wait(until: nil, listening: true))
    }

    @Test func aFailureWaitsForTheRetryTablesTimeWithoutListeningThenRunsARound() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        plan.failed(retryAt: at(4))
        #expect(plan.next(now: at(1)) == .wait(until: at(4), listening: false))
        // A write during the backoff waits for it too.
        plan.wrote(now: at(2))
        #expect(plan.next(now: at(2.5)) == .wait(until: at(4), listening: false))
        #expect(plan.next(now: at(4)) == .round)
    }

    @Test func aFailedLongPollBacksOffThenRunsARound() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        plan.roundSucceeded()
        plan.failed(retryAt: at(2))
        #expect(plan.next(now: at(1)) == .wait(until: at(2), listening: false))
        #expect(plan.next(now: at(2)) == .round)
    }

    @Test func theNetworkBackOrASyncCallEndsABackoffAtOnce() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        plan.failed(retryAt: at(60))
        plan.askedNow(now: at(5))
        #expect(plan.next(now: at(5)) == .round)
    }

    @Test func aPauseWaitsForTheAppAndIgnoresWrites() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        plan.failed(retryAt: nil)
        #expect(plan.next(now: at(1)) == .wait(until: nil, listening: false))
        plan.wrote(now: at(2))
        #expect(plan.next(now: at(100)) == .wait(until: nil, listening: false))
        plan.askedNow(now: at(101))
        #expect(plan.next(now: at(101)) == .round)
    }

    @Test func aQuickEmptyAnswerHoldsTheNextPollBackSoTheLoopNeverSpins() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        plan.roundSucceeded()
        plan.pollAnswered(empty: true, elapsed: 0.1, now: at(1))
        #expect(plan.next(now: at(1)) == .wait(until: at(1.9), listening: false))
        #expect(plan.next(now: at(1.9)) == .wait(until: nil, listening: true))
        // Changes, or an answer after a real wait, listen again at once.
        plan.pollAnswered(empty: false, elapsed: 0.01, now: at(2))
        #expect(plan.next(now: at(2)) == .wait(until: nil, listening: true))
        plan.pollAnswered(empty: true, elapsed: 20, now: at(22))
        #expect(plan.next(now: at(22)) == .wait(until: nil, listening: true))
        // A write during the quiet time still goes up on time.
        plan.pollAnswered(empty: true, elapsed: 0, now: at(30))
        plan.wrote(now: at(30))
        #expect(plan.next(now: at(30)) == .wait(until: at(30.25), listening: false))
        #expect(plan.next(now: at(30.25)) == .round)
    }

    @Test func aTTLsEndWakesTheLoopToEvictWhetherListeningPausedOrBackingOff() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        plan.roundSucceeded()
        plan.evictions(due: at(60))
        // Listening: the wait ends at the TTL's end, the long poll open.
        #expect(plan.next(now: at(1)) == .wait(until: at(60), listening: true))
        #expect(plan.next(now: at(60)) == .evict)
        plan.evictions(due: nil)
        #expect(plan.next(now: at(60)) == .wait(until: nil, listening: true))
        // A round due first goes first; the eviction stays due after it.
        plan.evictions(due: at(120))
        plan.wrote(now: at(100))
        #expect(plan.next(now: at(100)) == .wait(until: at(100.25), listening: true))
        // Backing off (no network needed to evict) and paused alike.
        plan.failed(retryAt: at(200))
        #expect(plan.next(now: at(101)) == .wait(until: at(120), listening: false))
        #expect(plan.next(now: at(120)) == .evict)
        plan.failed(retryAt: nil)
        #expect(plan.next(now: at(110)) == .wait(until: at(120), listening: false))
        #expect(plan.next(now: at(121)) == .evict)
        plan.stopped()
        #expect(plan.next(now: at(121)) == .end)
    }

    @Test func stopEndsWhateverWasDue() {
        var plan = LivePlan(uploadDelay: 0.25, now: t0)
        plan.failed(retryAt: at(10))
        plan.stopped()
        #expect(plan.next(now: at(1)) == .end)
    }
}
