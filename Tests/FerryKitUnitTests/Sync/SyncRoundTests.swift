@testable import FerryKit
import Foundation
import Testing

/// The values a round and the rounds after it carry, without an engine.
@Suite("Sync round and schedule")
struct SyncRoundTests {
    @Test func aRoundHasAtMostItsPassesAndEachPassForgetsTheLastOnesRefusals() {
        var round = SyncRound()
        var began = round.beginPass()
        #expect(began)
        round.refused.insert(RowKey(resource: "terms", id: "t"))
        round.solo.insert(RowKey(resource: "terms", id: "u"))
        began = round.beginPass()
        #expect(began)
        #expect(round.refused.isEmpty, "refusals belong to one pass")
        #expect(round.solo == [RowKey(resource: "terms", id: "u")], "rows sent alone stay alone for the round")
        var passes = 2
        while round.beginPass() { passes += 1 }
        #expect(passes == SyncRound.maxPasses)
    }

    @Test func failuresBackOffWithTheirCountAndRetryAfterWinsAndSuccessResets() {
        let policy = RetryPolicy(base: 1, cap: 60)
        let now = Date(timeIntervalSince1970: 1_000)
        var schedule = SyncSchedule()
        #expect(schedule.failed(TransportFailure("down"), policy: policy, now: now, random: { 0.5 }) == now.addingTimeInterval(0.5))
        #expect(schedule.failed(TransportFailure("down"), policy: policy, now: now, random: { 0.5 }) == now.addingTimeInterval(1))
        #expect(schedule.failures == 2 && schedule.nextAttempt == now.addingTimeInterval(1))
        #expect(
            schedule.failed(ServerRefusedForNow(status: 503, retryAfter: 7), policy: policy, now: now, random: { 0.5 })
                == now.addingTimeInterval(7))
        schedule.succeeded()
        #expect(schedule.failures == 0 && schedule.nextAttempt == nil)
    }
}
