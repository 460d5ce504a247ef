@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// Continuous mode leaves a wait on several streams (`POST /v1/changes/wait`)
/// behind when it ends it, as it does the default stream's long poll
/// (``abandoningOnCancel(_:)``): on a transport that ignores cancellation (a
/// blocking socket, an app's own), `stop()` must not wait out the server's
/// answer (nor a local write's upload, nor a split wait's first answer, which
/// end the wait the same way). The wait is a POST, and only GETs were left
/// behind: `stop()` waited for the wait's answer, up to `longPollWait`.
struct WaitLeftBehindTests {
    /// The scripted server, except that a wait is answered only when the test
    /// says (``release()``), whatever cancels its caller meanwhile.
    final class HeldWaits: Transport {
        let inner = ScriptedTransport()
        private let held = Locked<(sent: Int, waiting: [CheckedContinuation<Void, Never>], released: Bool)>((0, [], false))

        var waitsSent: Int { held.withLock { $0.sent } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            guard request.path == "/v1/changes/wait" else { return try await inner.send(request) }
            await withCheckedContinuation { continuation in
                let now = held.withLock { state -> Bool in
                    state.sent += 1
                    if state.released { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
            return ScriptedTransport.json(200, #"{"changed":[]}"#)
        }

        /// Answers every wait held, and every later one at once.
        func release() {
            let waiting = held.withLock { state in
                state.released = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    @Test func stopDoesNotWaitOutAWaitOnSeveralStreams() async throws {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.schema)
        _ = try store.applyPage([], cursor: "c0") { _ in nil }  // the default stream synced before
        let transport = HeldWaits()
        defer { transport.release() }
        let engine = SyncEngine(
            store: store, transport: transport, tokens: FixedToken("t1"), policy: RetryPolicy(base: 1, cap: 60), random: { 0.5 })
        try await engine.subscribe(stream: "set", id: "s")
        try await engine.sync()
        #expect(try store.syncedSubscriptions().count == 1)

        await engine.start(uploadDelay: 0.05, longPollWait: 20)
        // Each bound below only ends a failure (120 s); the state itself ends a pass.
        for _ in 0..<2_400 where transport.waitsSent == 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(transport.waitsSent > 0, "the engine never waited on its two streams")
        let stopped = Flag()
        let stopping = Task {
            await engine.stop()
            stopped.set()
        }
        for _ in 0..<2_400 where !stopped.isSet { try await Task.sleep(for: .milliseconds(50)) }
        #expect(stopped.isSet, "stop() waited out the wait's answer")
        // Without the fix, stop() returns only now.
        transport.release()
        await stopping.value
    }

    final class Flag: Sendable {
        private let value = Locked(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }
}
