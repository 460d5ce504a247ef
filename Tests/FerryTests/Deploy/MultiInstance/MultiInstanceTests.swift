import FerryHTTPTestSupport
import Foundation
import FerryPostgres
import FerryTestSupport
import Synchronization
import Testing

/// More than one machine, on loopback: two `ferry serve` processes behind nginx
/// (the shipped deploy/nginx/ferry.conf), two memcached servers, PostgreSQL
/// only through PgBouncer in transaction pooling mode.
@Suite(.serialized) struct MultiInstanceTests {
    private func basic(_ name: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(name):\(password)".utf8).base64EncodedString())
    }

    private func makeUser(_ deployment: LoopbackDeployment, _ name: String, _ password: String) throws {
        let owner = try PostgresConnection(url: deployment.database.ownerURL)
        defer { owner.close() }
        _ = try owner.query("SELECT ferry.create_user($1, $2)", [name, password])
    }

    @Test func instancesShareTheLoadThroughNginxAndPgBouncer() throws {
        let deployment = try LoopbackDeployment()
        defer { deployment.stop() }
        try makeUser(deployment, "walker", "walker-password")
        let client = TestHTTPClient(port: deployment.nginxPort)
        let signIn = try client.request("POST", "/v1/auth/token", headers: [basic("walker", "walker-password")])
        try #require(signIn.status == 201, "sign-in through nginx and PgBouncer: \(signIn.status) \(signIn.text)\n\(deployment.logs)")
        let token = try #require(signIn.object["token"] as? String)
        for _ in 0..<20 {
            let me = try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(token)")])
            #expect(me.status == 200)
        }

        // Round-robin: both instances answered, together exactly the 20 requests.
        var counts: [Double] = []
        for port in deployment.ferryPorts {
            let scrape = try TestHTTPClient(port: port).request("GET", "/metrics")
            let samples = try PrometheusSamples(scrape.text)
            counts.append(samples.value("ferry_http_requests_total", ["route": "/v1/auth/me", "status": "200"]) ?? 0)
        }
        #expect(counts.allSatisfy { $0 > 0 }, "one instance got nothing: \(counts)")
        #expect(counts.reduce(0, +) == 20)

        // Eight pooled client connections shared PgBouncer's two server connections;
        // besides them, each instance holds its one LISTEN connection, straight to PostgreSQL.
        let owner = try PostgresConnection(url: deployment.database.ownerURL)
        defer { owner.close() }
        let servers = try owner.query(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND usename = 'ferry_app' AND application_name <> 'ferry-listen'",
            [deployment.database.name]
        ).rows[0][0]
        #expect(Int(servers ?? "") ?? 99 <= deployment.serverConnections)
        try waitUntil("one LISTEN connection per instance", within: 30) {
            try owner.query(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'ferry-listen'",
                [deployment.database.name]
            ).rows[0][0] == String(deployment.ferryPorts.count)
        }

        // TLS is terminated by nginx; port 80 redirects to it.
        let tls = try Subprocess.run([
            "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}",
            "https://127.0.0.1:\(deployment.nginxTLSPort)/healthz",
        ])
        #expect(tls.output == "200", "TLS through nginx: \(tls.output)")
        let redirect = try Subprocess.run([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
            "http://127.0.0.1:\(deployment.redirectPort)/v1",
        ])
        #expect(redirect.output == "308")
    }

    @Test func stoppingOneInstanceLosesNoAcknowledgedWrite() throws {
        let deployment = try LoopbackDeployment()
        defer { deployment.stop() }
        try makeUser(deployment, "writer", "writer-password")
        let client = TestHTTPClient(port: deployment.nginxPort, timeout: 30)
        let signIn = try client.request("POST", "/v1/auth/token", headers: [basic("writer", "writer-password")])
        let token = try #require(signIn.object["token"] as? String, "\(signIn.status) \(signIn.text)")
        let auth = ("Authorization", "Bearer \(token)")
        var acknowledged: [String] = []
        var statuses: [Int] = []
        let stopped = Atomic<Bool>(false)
        for index in 0..<60 {
            if index == 15 {
                // Stop one instance while writes keep coming (SIGTERM: finish in-flight, then exit).
                let ferry = deployment.ferries[0]
                Thread {
                    ferry.stop(signal: SIGTERM)
                    stopped.store(true, ordering: .releasing)
                }.start()
            }
            // An offline client's create: its own id, retried as is after a temporary failure.
            let id = UUID().uuidString.lowercased()
            for _ in 0..<3 {
                let status: Int
                do {
                    status = try client.request("POST", "/v1/study_sets", headers: [auth], json: ["id": id, "title": "set \(index)"]).status
                } catch {
                    client.close()  // nginx dropped the connection: reconnect and retry
                    status = 0
                }
                statuses.append(status)
                if status == 201 || status == 200 {
                    acknowledged.append(id)
                    break
                }
            }
        }
        try waitUntil("the stopped instance to exit", within: 30) { stopped.load(ordering: .acquiring) }
        #expect(!deployment.ferries[0].isRunning)
        // Anything but a success was a temporary answer the client could retry.
        #expect(statuses.allSatisfy { [201, 200, 502, 503, 0].contains($0) }, "statuses: \(statuses)")
        #expect(acknowledged.count == 60, "statuses: \(statuses)\n\(deployment.logs)")
        // Every acknowledged write is there, read through the surviving instance.
        let reader = TestHTTPClient(port: deployment.nginxPort)
        for id in acknowledged {
            let row = try reader.request("GET", "/v1/study_sets/\(id)", headers: [auth])
            #expect(row.status == 200, "acknowledged row \(id) is missing: \(row.status)")
        }
        let owner = try PostgresConnection(url: deployment.database.ownerURL)
        defer { owner.close() }
        #expect(try owner.query("SELECT count(*) FROM app.study_sets").rows[0][0] == "60")
    }
}
