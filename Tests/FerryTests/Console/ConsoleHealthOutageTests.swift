import FerryHTTPTestSupport
import Foundation
import Testing
import FerryTestSupport

/// The console's Health page while PostgreSQL does not answer: the time an operator
/// needs it most. A console token can only be checked in PostgreSQL, so the instance
/// keeps the sessions it checked lately (`ConsoleRecentSessions`) and answers them with
/// its own figures; any other token gets the outage's 503.
@Suite struct ConsoleHealthOutageTests {
    @Test(.timeLimit(.minutes(3))) func anOperatorWatchingHealthKeepsItWhilePostgreSQLIsFrozen() throws {
        let isolated = try PrivateClusterServer { $0.database.acquireTimeoutMs = 500 }
        defer { isolated.stop() }
        let (cluster, server) = (isolated.cluster, isolated.server)
        let watching = try ConsoleFixture.operatorToken(server, name: "dana", role: "admin")
        let other = try ConsoleFixture.operatorToken(server, name: "vic", role: "viewer")
        let revoked = try ConsoleFixture.operatorToken(server, name: "rex", role: "viewer")
        let health = { (token: String) throws -> TestHTTPClient.Response in
            try TestHTTPClient(port: server.port, timeout: 60).request(
                "GET", "/console/api/health", headers: [("Authorization", "Bearer \(token)")])
        }
        let up = try health(watching)
        #expect(up.status == 200, "\(up.text)")
        #expect((up.object["postgresql"] as? [String: Any])?["up"] as? Bool == true, "\(up.text)")
        #expect(up.object["feed"] is [String: Any], "\(up.text)")
        // A session checked here, then revoked elsewhere while PostgreSQL still answers: forgotten.
        #expect(try health(revoked).status == 200)
        _ = try server.ownerQuery(
            "UPDATE ferry.operator_tokens SET revoked = true WHERE operator_id = (SELECT id FROM ferry.operators WHERE name = 'rex')")
        #expect(try health(revoked).status == 401)

        try cluster.freeze()
        defer { cluster.thaw() }
        let down = try health(watching)
        #expect(down.status == 200, "\(down.text)")
        let postgresql = down.object["postgresql"] as? [String: Any]
        #expect(postgresql?["up"] as? Bool == false && (postgresql?["detail"] as? String)?.isEmpty == false, "\(down.text)")
        #expect(down.object["feed"] is NSNull, "\(down.text)")
        #expect((down.object["pool"] as? [String: Any])?["size"] as? Int == 4, "the process's own figures: \(down.text)")
        // A session this instance has not checked is not taken on trust.
        let unchecked = try health(other)
        #expect(unchecked.status == 503 && unchecked.header("Retry-After") != nil, "\(unchecked.text)")
        #expect(try health(revoked).status == 503, "a session PostgreSQL refused is not taken on trust")
        // Nor one signed out here, though PostgreSQL could not record the sign-out.
        let signOut = try TestHTTPClient(port: server.port, timeout: 60).request(
            "DELETE", "/console/api/session", headers: [("Authorization", "Bearer \(watching)")])
        #expect(signOut.status == 503, "\(signOut.text)")
        #expect(try health(watching).status == 503)

        cluster.thaw()
        try waitUntil("the console to be answered from PostgreSQL again", within: 30) {
            let answer = try? health(watching)
            return answer?.status == 200 && (answer?.object["postgresql"] as? [String: Any])?["up"] as? Bool == true
        }
    }
}
