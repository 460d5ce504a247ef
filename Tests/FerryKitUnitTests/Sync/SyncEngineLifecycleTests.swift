@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// An engine's streams end with the engine, so an app's `for await` loop over
/// them (and all that task holds) does not outlive a sign-out.
@Suite struct SyncEngineLifecycleTests {
    @Test func eventsAndStatusFinishWhenTheEngineGoes() async throws {
        let store = try FerryStore(path: ":memory:")
        var engine: SyncEngine? = SyncEngine(store: store, transport: ScriptedTransport(), token: "t1")
        let events = try #require(engine).events
        let status = try #require(engine).status
        let readers = Task {
            async let eventsEnded: Void = { for await _ in events {} }()
            async let statusEnded: Void = { for await _ in status {} }()
            _ = await (eventsEnded, statusEnded)
            return true
        }
        engine = nil
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await readers.value }
            // Generous: in a full test run other suites can hold the two
            // cooperative threads of a 2-core machine for a minute (CI saw 60 s),
            // and the readers only need to be scheduled once to end. Not a wait: the
            // deadline of a race the readers win as soon as they end.
            group.addTask {
                try? await Task.sleep(for: .seconds(300)); return false
            }
            let first = await group.next() ?? false
            // A stream's reader also ends when its task is cancelled: that
            // frees the waiting child when the engine did not finish them.
            readers.cancel()
            group.cancelAll()
            return first
        }
        #expect(ended, "a reader of a dropped engine's streams is still waiting")
    }
}
