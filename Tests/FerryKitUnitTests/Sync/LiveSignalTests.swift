@testable import FerryKit
import Foundation
import Testing

/// What wakes continuous mode's loop (``LiveSignal``), and how it leaves a
/// request that ignores cancellation behind (``abandoningOnCancel(_:)``).
@Suite struct LiveSignalTests {
    @Test func whatWasPostedBeforeTheWaitIsAnsweredAtOnceAndOnlyOnce() async {
        let signal = LiveSignal()
        signal.post(.wrote)
        signal.post(.network)
        #expect(await signal.wait(seconds: 60) == [.wrote, .network])
        #expect(await signal.wait(seconds: 0.01) == [])
    }

    @Test func aPostFromAnotherThreadEndsTheWait() async {
        let signal = LiveSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { signal.post(.stop) }
        // Generous: the deadline only bounds a failure; the post ends it within milliseconds.
        #expect(await signal.wait(seconds: 120) == [.stop])
    }

    @Test func theDeadlineEndsAWaitThatNothingEnds() async {
        let signal = LiveSignal()
        let started = ContinuousClock.now
        #expect(await signal.wait(seconds: 0.05) == [])
        #expect(ContinuousClock.now - started >= .milliseconds(50))
    }

    @Test func aCancelledWaitReturnsAndWhatComesLaterIsKept() async {
        let signal = LiveSignal()
        let waiting = Task { await signal.wait(seconds: nil) }
        waiting.cancel()
        #expect(await waiting.value == [])
        signal.post(.sync)
        signal.discard(.pollEnded)
        #expect(await signal.wait(seconds: 0) == [.sync])
    }

    @Test func aCancelledCallerLeavesAnOperationThatIgnoresCancellation() async {
        let caller = Task {
            try await abandoningOnCancel {
                // Ignores cancellation, as a blocking socket read does, for far
                // longer than a starved test run can delay the cancelled caller.
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 600) { continuation.resume() }
                }
                return 1
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        caller.cancel()
        let outcome = await caller.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        // Generous: a full test run can hold the cooperative threads for a minute (CI saw 60 s).
        #expect(ContinuousClock.now - started < .seconds(300), "the caller waited for the operation")
    }

    @Test func anOperationsResultAndErrorReachTheCaller() async throws {
        #expect(try await abandoningOnCancel { 7 } == 7)
        await #expect(throws: TransportFailure.self) {
            try await abandoningOnCancel { () async throws -> Int in throw TransportFailure("no") }
        }
    }
}
