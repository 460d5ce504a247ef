import FerryHTTPTestSupport
import FerryKit
import FerryTestSupport
import Foundation
import StudyModels
import Testing

/// The README's example, line for line, against a real `ferry serve` (the
/// server and user come from the test instead of port 8080 and the demo user),
/// and a check that this file still holds every line of the README's example.
@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRuns() async throws {
        let ferry = try FerryServer()
        defer { ferry.stop() }
        _ = try await ferry.user("demo")

        let server = ferry.baseURL
        let transport = URLSessionTransport(baseURL: server)
        let session = FerryAuth.PasswordSession(transport: transport, name: "demo", password: "secret-demo")
        let userID = try await session.signIn()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(FerryStore.fileName(server: server, userID: userID))
        defer { _ = try? FerryStore.signOut(path: file.path, discardingUnsynced: true) }
        let store = try FerryStore(path: file.path)
        let engine = SyncEngine(store: store, transport: transport, tokens: session)
        Task { for await event in engine.events { print(event) } }
        try await engine.sync()

        let set = try store.insert(StudySet(title: "Spanish"))
        let hola = try store.insert(Term(setID: set.id, word: "hola"))
        try store.update(hola) { $0.definition = "hello" }
        #expect(try store.pendingCount() == 3)

        try await engine.sync()
        #expect(try store.state(of: set) == .synced)
        #expect(try store.fetch(Term.self).map(\.word) == ["hola"])
        #expect(try store.pendingCount() == 0)
        #expect(try store.fetch(Term.self, id: hola.id)?.revision == 1, "the server's row came back as the base")

        let opened = try await engine.subscribe(StudySet.self, id: set.id, ttl: .days(7), priority: .high)
        #expect(try opened.state() == .queued)
        try await engine.sync()
        #expect(try opened.state() == .synced)
        #expect(try store.fetch(Term.self).map(\.word) == ["hola"], "the user's own set: nothing new, nothing twice")

        await engine.start()
        try store.update(hola) { $0.definition = "hello!" }
        try await waitUntilAsync("the edit uploaded by continuous mode", within: 60) { try store.pendingCount() == 0 }
        await engine.stop()
        #expect(try store.fetch(Term.self, id: hola.id)?.revision == 2)
    }

    /// Every statement of the README's example is in the test above, as written
    /// (but the two that name the demo server and password).
    @Test func theTestHoldsTheReadmesLines() throws {
        let readme = try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "```swift\nimport FerryKit\n"))
        let block = readme[start.upperBound...].prefix { _ in true }
        let end = try #require(block.range(of: "```"))
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let statements = block[..<end.lowerBound].split(separator: "\n").map { line in
            (line.range(of: "  //").map { String(line[..<$0.lowerBound]) } ?? String(line)).trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty && !$0.hasPrefix("//") && !$0.hasPrefix("print(") }
        #expect(statements.count >= 15, "read the README's example: \(statements)")
        for statement in statements where !statement.hasPrefix("let server = ") && !statement.hasPrefix("let session = ") {
            #expect(source.contains(statement), "the README's line is not in ReadmeExampleTests: \(statement)")
        }
    }
}
