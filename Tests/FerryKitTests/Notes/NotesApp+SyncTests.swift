@testable import ferry_notes
import FerryHTTPTestSupport
import FerryKit
import Foundation
import Synchronization
import Testing

/// How many calls have returned, counted from unstructured tasks.
private final class Returned: Sendable {
    let count = Atomic<Int>(0)
}

/// Every request fails, after a pause: a sync that takes a while and then fails.
private struct SlowDownTransport: Transport {
    func send(_ request: TransportRequest) async throws -> TransportResponse {
        // A real sleep: a sync that takes a while is what the test needs.
        try await Task.sleep(for: .milliseconds(300))
        throw TransportFailure("the server is down")
    }
}

@Suite("ferry-notes: one sync at a time")
struct NotesAppSyncTests {
    /// A typed `sync` arriving while another runs waits for it and then syncs
    /// itself. Before the fix the waiter spun on the finished task, holding the
    /// app's actor, and the app froze (the tmux test caught it under load).
    @Test func aSyncAskedForWhileOneRunsWaitsForItThenRuns() async throws {
        let store = try FerryStore(path: ":memory:")
        let transport = OfflineTransport(SlowDownTransport())
        let engine = SyncEngine(store: store, transport: transport, token: "t")
        let app = NotesApp(
            store: store, engine: engine, transport: transport,
            account: .init(user: "u", userID: "id", server: URL(string: "http://127.0.0.1:9")!, storePath: ":memory:"),
            terminal: false, live: false)
        let returned = Returned()
        // Unstructured, so that a spinning call cannot keep the test from ending.
        Task {
            await app.syncNow(); returned.count.add(1, ordering: .relaxed)
        }
        try await waitUntilAsync("the first sync to run") { await app.running != nil }
        Task {
            await app.syncNow(); returned.count.add(1, ordering: .relaxed)
        }
        // Generous: a full test run can hold the cooperative threads for a minute
        // (CI saw 60 s); the hang this guards against never returns at all.
        let bothReturned = try await eventuallyAsync(within: 180) { returned.count.load(ordering: .relaxed) == 2 }
        #expect(bothReturned, "a sync asked for while another ran never returned")
        // Only then: a spinning call holds the app's actor, and asking it would wait forever.
        if bothReturned { #expect(await app.lastError != nil, "both syncs ran and failed, and the screen would say why") }
    }
}
