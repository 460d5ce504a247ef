import FerryHTTPTestSupport
import Foundation
import FerryPostgres
import FerryTestSupport
import Testing

/// The live feed across the instances of one loopback deployment (nginx, two
/// `ferry serve`, PgBouncer): a commit through one instance wakes a waiter on
/// the other, a long poll and an event stream pass through nginx, and a
/// migration makes every instance reload its schema without a signal.
@Suite(.serialized) struct MultiInstanceLiveTests {
    @Test func aCommitThroughOneInstanceWakesWaitersOnTheOtherAndThroughNginx() throws {
        let deployment = try LoopbackDeployment()
        defer { deployment.stop() }
        do { try crossInstance(deployment) } catch { Issue.record("\(error)\n\(deployment.logs)") }
    }

    private func crossInstance(_ deployment: LoopbackDeployment) throws {
        let token = try Self.signIn(deployment)
        let auth = ("Authorization", "Bearer \(token)")
        let set = UUID().uuidString.lowercased()
        let writer = TestHTTPClient(port: deployment.ferryPorts[0])
        #expect(try writer.request("POST", "/v1/study_sets", headers: [auth], json: ["id": set, "title": "live"]).status == 201)
        // A cursor past the set (one from since=now may be below it while other transactions run).
        var cursor = ""
        var seen = false
        try waitUntil("the set to be in the feed", within: 60) {
            let page = try TestHTTPClient(port: deployment.ferryPorts[1]).request("GET", "/v1/changes?since=\(cursor)", headers: [auth])
            seen = seen || changedIDs(page.object, "study_sets").contains(set)
            cursor = page.object["cursor"] as? String ?? cursor
            return seen && page.object["has_more"] as? Bool == false
        }

        // A long poll on instance 1, one through nginx, and an event stream through nginx.
        let direct = PendingRequest(port: deployment.ferryPorts[1], "/v1/changes?since=\(cursor)&wait=60", token: token)
        let proxied = PendingRequest(port: deployment.nginxPort, "/v1/changes?since=\(cursor)&wait=60", token: token)
        let stream = try EventStreamReader(port: deployment.nginxPort, token: token, query: "?since=\(cursor)")
        #expect(stream.head.header("Content-Type") == "text/event-stream; charset=utf-8")
        _ = try stream.nextChanges()
        try waitUntil("three waiters across the instances", within: 30) { try Self.waiters(deployment) == 3 }

        // The write goes to instance 0 only.
        let created = try writer.request("POST", "/v1/terms", headers: [auth], json: ["set_id": set, "word": "across"])
        let term = try #require(created.object["id"] as? String, "\(created.status) \(created.text)")
        for poll in [direct, proxied] {
            let response = try poll.response()
            #expect(response.status == 200)
            #expect(ChangesSuites.LongPollTests.ids(response, "terms") == [term])
            #expect(Date().timeIntervalSince(poll.started) < 50)
        }
        var received: Set<String> = []
        while received.isEmpty { received = ChangesSuites.EventStreamTests.ids(try stream.nextChanges(), "terms") }
        #expect(received == [term])
    }

    @Test func aMigrationReloadsEveryInstanceWithoutASignal() throws {
        let deployment = try LoopbackDeployment()
        defer { deployment.stop() }
        do { try reload(deployment) } catch { Issue.record("\(error)\n\(deployment.logs)") }
    }

    private func reload(_ deployment: LoopbackDeployment) throws {
        let token = try Self.signIn(deployment)
        let auth = ("Authorization", "Bearer \(token)")
        for port in deployment.ferryPorts {
            #expect(try TestHTTPClient(port: port).request("GET", "/v1/live_notes", headers: [auth]).status == 404)
        }
        // `ferry migrate` with one more app file than the deployment was migrated with.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-live-migrations-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(
            at: TestEnvironment.repositoryRoot.appendingPathComponent("examples/study/migrations"),
            to: directory)
        try """
        CREATE TABLE app.live_notes (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), body text NOT NULL DEFAULT '');
        SELECT ferry.enable_sync('app.live_notes');
        GRANT SELECT, INSERT (id, body), UPDATE (body, is_deleted) ON app.live_notes TO ferry_app;
        """.write(to: directory.appendingPathComponent("9001_live_notes.sql"), atomically: true, encoding: .utf8)
        let migrate = try FerryProcess.run(
            ["migrate", "--dir", directory.path],
            environment: ["FERRY_DATABASE_MIGRATION_URL": deployment.database.ownerURL])
        try #require(migrate.status == 0, "\(migrate.stderr)")
        for port in deployment.ferryPorts {
            try waitUntil("instance on port \(port) to serve the new table", within: 30) {
                try TestHTTPClient(port: port).request("GET", "/v1/live_notes", headers: [auth]).status == 200
            }
        }
    }

    /// A user and a bearer token, signed in through nginx.
    static func signIn(_ deployment: LoopbackDeployment) throws -> String {
        let owner = try PostgresConnection(url: deployment.database.ownerURL)
        defer { owner.close() }
        _ = try owner.query("SELECT ferry.create_user($1, $2)", ["waiter", "waiter-password"])
        let basic = "Basic " + Data("waiter:waiter-password".utf8).base64EncodedString()
        let signIn = try TestHTTPClient(port: deployment.nginxPort).request("POST", "/v1/auth/token", headers: [("Authorization", basic)])
        guard let token = signIn.object["token"] as? String else {
            throw ServiceProcess.Failure(description: "sign-in: \(signIn.status) \(signIn.text)")
        }
        return token
    }

    /// The waiters of every instance, from their /metrics.
    static func waiters(_ deployment: LoopbackDeployment) throws -> Int {
        try deployment.ferryPorts.reduce(0) { total, port in
            let text = try TestHTTPClient(port: port).request("GET", "/metrics").text
            let line = text.split(separator: "\n").first { $0.hasPrefix("ferry_live_waiters ") }
            return total + (line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0)
        }
    }
}
