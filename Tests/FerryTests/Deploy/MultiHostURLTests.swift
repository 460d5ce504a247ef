import Foundation
import FerryTestSupport
import Testing

/// PostgreSQL failover through libpq's multi-host URLs (deploy/README.md): the
/// first host is down, libpq moves on to the next one that is a primary.
@Suite struct MultiHostURLTests {
    @Test func ferryServesThroughAMultiHostURL() throws {
        let database = try ScratchDatabase(prefix: "ferry_ops")
        let app = try #require(URLComponents(string: database.appURL))
        let dead = FreePort.next()
        let multiHost =
            "postgresql://\(app.user ?? ""):\(app.password ?? "")@127.0.0.1:\(dead),\(app.host ?? ""):\(app.port ?? 0)"
            + "\(app.path)?target_session_attrs=read-write&connect_timeout=2"
        let server = try TestServer(database: database) { $0.database.url = multiHost }
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let auth = ("Authorization", "Bearer \(alice.token)")
        let id = UUID().uuidString.lowercased()
        let created = try client.request("POST", "/v1/study_sets", headers: [auth], json: ["id": id, "title": "failover"])
        #expect(created.status == 201, "\(created.status) \(created.text)")
        #expect(try client.request("GET", "/v1/study_sets/\(id)", headers: [auth]).status == 200)
    }
}
