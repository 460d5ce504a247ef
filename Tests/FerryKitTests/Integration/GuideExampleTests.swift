import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// docs/GUIDE.md's FerryKit example, line for line (Tests/Guide/run.sh checks that it
/// is): a whole function with its imports, compiled here as written, run against a real `ferry serve` on a database migrated with the files `ferry init`
/// writes: an app's own tables, synced by FerryKit.
@Suite struct GuideExampleTests {
    @Test func theGuidesFerryKitExampleRuns() async throws {
        let database = try ScratchDatabase.create(prefix: "ferry_guide")
        let scaffold = TestEnvironment.repositoryRoot.appendingPathComponent("Sources/FerryCLI/Scaffold/migrations")
        try database.applyMigrations(
            appFiles: Dictionary(
                uniqueKeysWithValues: try FileManager.default
                    .contentsOfDirectory(atPath: scaffold.path).filter { $0.hasSuffix(".sql") }
                    .map { ($0, try String(contentsOf: scaffold.appendingPathComponent($0), encoding: .utf8)) }))
        let ferry = try FerryServer(database: database)
        defer { ferry.stop() }
        let added = try FerryProcess.run(
            ["user", "add", "alice"], environment: ["FERRY_DATABASE_MIGRATION_URL": database.ownerURL],
            input: "alice-password\n")
        try #require(added.status == 0, "\(added.stderr)")
        let server = ferry.baseURL
        try await syncAlicesProjects(server: server)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(FerryStore.fileName(server: server, userID: try alice(database)))
        defer { _ = try? FerryStore.signOut(path: file.path, discardingUnsynced: true) }
        let store = try FerryStore(path: file.path)
        guard case .string(let project)? = try store.rows("projects").first?["id"] else {
            Issue.record("alice's store holds no project")
            return
        }

        #expect(try store.pendingCount() == 0)
        #expect(try store.state("projects", id: project) == .synced)
        #expect(try store.rows("tasks").first?["revision"] == .int(1), "the server's row came back as the base")
        let rows = try database.column("SELECT p.name || ' ' || t.title FROM app.projects p JOIN app.tasks t ON t.project_id = p.id")
        #expect(rows == ["Kitchen paint"])
    }

    private func alice(_ database: ScratchDatabase) throws -> String {
        try #require(try database.column("SELECT id::text FROM ferry.users WHERE name = 'alice'").compactMap { $0 }.first)
    }
}

/// Syncs alice's projects and tasks into a local SQLite file, and adds one of each.
func syncAlicesProjects(server: URL) async throws {  // such as URL(string: "http://127.0.0.1:8080")!
    let transport = URLSessionTransport(baseURL: server)
    let (token, userID) = try await FerryAuth.signIn(transport: transport, name: "alice", password: "alice-password")
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(FerryStore.fileName(server: server, userID: userID))
    let store = try FerryStore(path: file.path)
    let engine = SyncEngine(store: store, transport: transport, token: token)
    try await engine.sync()  // the projects and tasks alice may see

    let project = try store.create("projects", ["name": .string("Kitchen")])
    let rank = try store.rankAtEnd("tasks", scope: .string(project))
    try store.create("tasks", ["project_id": .string(project), "title": .string("paint"), "rank": .string(rank)])
    try await engine.sync()  // uploaded; the server's rows come back
}
