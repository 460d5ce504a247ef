@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    /// The process dies after the server applied an upload and before the store
    /// recorded the answer; the store is opened again from its file.
    @Test func aClientKilledMidSyncResumesWithNothingLostOrAppliedTwice() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-crash-\(UUID()).sqlite").path
        defer { _ = try? FerryStore.signOut(path: path, discardingUnsynced: true) }
        let set: String
        do {
            let store = try FerryStore(path: path)
            let transport = FaultyTransport(URLSessionTransport(baseURL: server.baseURL))
            let engine = SyncEngine(store: store, transport: transport, token: alice.token)
            try await engine.sync()
            set = try store.create("study_sets", ["title": .string("written once")])
            try store.create("terms", ["set_id": .string(set), "word": .string("t"), "rank": .string("U")])
            transport.inject(.dropResponse) { $0.method == "POST" && $0.path == "/v1/terms" }
            await #expect(throws: TransportFailure.self) { try await engine.sync() }
            #expect(try store.state("terms", id: try #require(store.rows("terms").first?["id"]?.string)) == .dirty)
        }
        let reopened = try FerryStore(path: path)
        #expect(try reopened.pendingCount() == 1, "the set was acknowledged; the term's answer was lost")
        let engine = SyncEngine(store: reopened, transport: URLSessionTransport(baseURL: server.baseURL), token: alice.token)
        try await engine.sync()
        #expect(try reopened.pendingCount() == 0)
        let other = try Device(server: server, token: alice.token)
        #expect(try await other.serverRows("terms", "set_id", set, token: alice.token).count == 1, "one term on the server")
        try await other.sync { try !other.store.rows("terms").isEmpty }
        #expect(try other.store.rows("terms", where: "set_id", equals: .string(set)).count == 1)
        #expect(try other.store.rows("study_sets").count == 1)
    }
}
