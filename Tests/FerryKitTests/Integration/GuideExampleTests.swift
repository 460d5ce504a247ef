import FerryHTTPTestSupport
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

    /// "Sync what a device needs": Bob follows Alice's public project on a server
    /// migrated with the guide's own files (`ferry init`'s, then each
    /// `cat > migrations/...` of docs/GUIDE.md, read from the guide itself).
    @Test func theGuidesSubscriptionExampleRuns() async throws {
        let database = try ScratchDatabase.create(prefix: "ferry_guide_streams")
        let scaffold = TestEnvironment.repositoryRoot.appendingPathComponent("Sources/FerryCLI/Scaffold/migrations")
        var files = Dictionary(
            uniqueKeysWithValues: try FileManager.default
                .contentsOfDirectory(atPath: scaffold.path).filter { $0.hasSuffix(".sql") }
                .map { ($0, try String(contentsOf: scaffold.appendingPathComponent($0), encoding: .utf8)) })
        let guide = try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/GUIDE.md"), encoding: .utf8)
        for written in guide.components(separatedBy: "cat > migrations/").dropFirst() {
            guard let head = written.range(of: " <<'SQL'\n"), let end = written.range(of: "\nSQL\n") else { continue }
            files[String(written[..<head.lowerBound])] = String(written[head.upperBound..<end.lowerBound])
        }
        #expect(files.keys.contains("0003_public_projects.sql"), "\(files.keys.sorted())")
        try database.applyMigrations(appFiles: files)
        let ferry = try FerryServer(database: database)
        defer { ferry.stop() }
        for name in ["alice", "bob"] {
            let added = try FerryProcess.run(
                ["user", "add", name], environment: ["FERRY_DATABASE_MIGRATION_URL": database.ownerURL], input: "\(name)-password\n")
            try #require(added.status == 0, "\(added.stderr)")
        }
        let alice = try alice(database)
        let open = try #require(
            try database.column(
                "INSERT INTO app.projects (owner_id, name, is_public) VALUES ('\(alice)', 'Community garden', true) RETURNING id::text"
            ).first ?? nil)
        _ = try database.column("INSERT INTO app.tasks (project_id, title) VALUES ('\(open)', 'water') RETURNING id")
        _ = try database.column("INSERT INTO app.projects (owner_id, name) VALUES ('\(alice)', 'Private') RETURNING id")

        let server = ferry.baseURL
        let transport = URLSessionTransport(baseURL: server)
        let (token, bob) = try await FerryAuth.signIn(transport: transport, name: "bob", password: "bob-password")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(FerryStore.fileName(server: server, userID: bob))
        defer { _ = try? FerryStore.signOut(path: file.path, discardingUnsynced: true) }
        let store = try FerryStore(path: file.path)
        let engine = SyncEngine(store: store, transport: transport, token: token)
        try await engine.sync()
        #expect(try store.rows("projects").isEmpty, "the default stream brings no public project")

        // The feed serves a commit once every transaction running when it committed has
        // ended, cluster-wide (other suites run meanwhile): the guide's one sync must find it.
        try await waitUntilAsync("the public project's stream to serve its task", within: 180) {
            let page = try await transport.send(
                TransportRequest(method: "GET", path: "/v1/changes?stream=project:\(open)", headers: ["Authorization": "Bearer \(token)"]))
            return String(decoding: page.body, as: UTF8.self).contains(#""title":"water""#)
        }
        let sub = try await followProject(open, engine: engine)
        #expect(try store.rows("projects").map { $0["id"] } == [.string(open)], "the public project, not the private one")
        #expect(try store.rows("tasks").map { $0["title"] } == [.string("water")])
        guard case .unsubscribed(let evictsAt) = try sub.state() else {
            Issue.record("unsubscribed, not \(try sub.state())")
            return
        }
        #expect(evictsAt > Date().addingTimeInterval(6 * 86_400), "kept for its TTL of a week")
        try await engine.sync()
        #expect(try store.rows("tasks").count == 1, "a warm cache within the TTL")

        // Subscribed again within its TTL: one check (304), nothing downloaded again. Now with
        // no TTL: its rows leave at unsubscribe.
        let brief = try await engine.subscribe(stream: "project", id: open, ttl: .zero)
        try await engine.sync()
        #expect(try brief.state() == .synced)
        try await engine.unsubscribe(brief)
        try await engine.sync()
        #expect(try store.rows("projects").isEmpty && store.rows("tasks").isEmpty, "evicted")
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

/// Bob keeps a public project offline while he looks at it, and for a week after.
func followProject(_ project: String, engine: SyncEngine) async throws -> StreamSubscription {
    let sub = try await engine.subscribe(stream: "project", id: project, ttl: .days(7), priority: .high)
    try await engine.sync()  // the project and its tasks, ahead of everything else
    try await engine.unsubscribe(sub)  // closed: the rows stay, a warm cache, for the TTL
    return sub  // its state: .unsubscribed(evictsAt: a week from now)
}
