import FerryKit
import Foundation
import Testing

/// The README's example, line for line, against a real `ferry serve` (the
/// server and user come from the test instead of port 8080 and the demo user).
@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRuns() async throws {
        let ferry = try FerryServer()
        defer { ferry.stop() }
        _ = try await ferry.user("demo")

        let server = ferry.baseURL
        let transport = URLSessionTransport(baseURL: server)
        let (token, userID) = try await FerryAuth.signIn(transport: transport, name: "demo", password: "secret-demo")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(FerryStore.fileName(server: server, userID: userID))
        defer { _ = try? FerryStore.signOut(path: file.path, discardingUnsynced: true) }
        let store = try FerryStore(path: file.path)
        let engine = SyncEngine(store: store, transport: transport, token: token)
        try await engine.sync()

        let set = try store.create("study_sets", ["title": .string("Spanish")])
        let rank = try store.rankAtEnd("terms", scope: .string(set))
        try store.create("terms", ["set_id": .string(set), "word": .string("hola"), "rank": .string(rank)])
        #expect(try store.pendingCount() == 2)

        try await engine.sync()
        #expect(try store.state("study_sets", id: set) == .synced)
        #expect(try store.pendingCount() == 0)
        #expect(try store.rows("terms").first?["revision"] == .int(1), "the server's row came back as the base")
    }
}
