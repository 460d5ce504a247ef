import FerryHTTPTestSupport
import Foundation
import Testing
import FerryTestSupport

/// PostgreSQL frozen (a hung host, or a partition that keeps TCP up) is an outage to
/// Ferry's clients, never a hang: a request waiting on it is answered 503 with
/// Retry-After once its answer timeout passes (`database.answer_timeout_ms`), `/readyz`
/// says PostgreSQL is down within a health check's time (and `/metrics` has
/// `ferry_feed_hold_known 0`), and service resumes by itself.
@Suite struct PostgresFrozenTests {
    /// Seconds `body` took, and what it returned.
    private func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = Date()
        let value = try body()
        return (value, Date().timeIntervalSince(start))
    }

    @Test(.timeLimit(.minutes(3))) func aFrozenDatabaseIsAnOutageNotAHang() throws {
        let isolated = try PrivateClusterServer {
            $0.database.statementTimeoutMs = 1_000
            $0.database.answerTimeoutMs = 6_000  // the least it may be: 5 s past the statement timeout
            $0.database.acquireTimeoutMs = 500
        }
        defer { isolated.stop() }
        let (cluster, server) = (isolated.cluster, isolated.server)
        let user = try server.user("rita")
        let me: (TestHTTPClient) throws -> TestHTTPClient.Response = { client in
            try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(user.token)")])
        }
        // Each request on a client of its own: one that times out leaves its connection unusable.
        #expect(try me(TestHTTPClient(port: server.port)).status == 200)
        #expect(try TestHTTPClient(port: server.port).request("GET", "/readyz").status == 200)

        try cluster.freeze()
        defer { cluster.thaw() }
        // The client waits 60 s: without the answer timeout the request would wait for ever.
        let (answer, waited) = try timed { try me(TestHTTPClient(port: server.port, timeout: 60)) }
        #expect(answer.status == 503, "\(answer.status) \(answer.text)")
        #expect(answer.header("Retry-After") != nil)
        // The answer timeout is 6 s for each of the round trip's two statements (the token
        // check and the read): 12 s. The rest is slack for a loaded machine.
        #expect(waited >= 11.9 && waited < 45, "answered after \(waited) s")

        let (ready, probeWaited) = try timed { try TestHTTPClient(port: server.port, timeout: 60).request("GET", "/readyz") }
        #expect(ready.status == 503)
        #expect(ready.text.contains("\"postgresql\":\"down\""), "\(ready.text)")
        // The probe waits 2 s for an answer, or to connect, not the 6 s answer timeout of a
        // request (nor the 5 s libpq takes to connect by default): under 3.9 s, with time to
        // spare for a loaded machine, where a probe without its own limit takes 4.5 s or more.
        #expect(probeWaited < 3.9, "/readyz answered after \(probeWaited) s")

        // /metrics says so, and leaves out the feed's gauges rather than report no hold.
        let frozenMetrics = try TestHTTPClient(port: server.port, timeout: 60).request("GET", "/metrics").text
        #expect(frozenMetrics.contains("\nferry_feed_hold_known 0\n"), "\(frozenMetrics.suffix(600))")
        #expect(!frozenMetrics.contains("ferry_feed_hold_over_limit"))

        cluster.thaw()
        try waitUntil("requests to be served again once PostgreSQL runs on", within: 30) {
            (try? me(TestHTTPClient(port: server.port, timeout: 10)).status) == 200
        }
        #expect(try TestHTTPClient(port: server.port).request("GET", "/readyz").status == 200)
        let metrics = try TestHTTPClient(port: server.port).request("GET", "/metrics").text
        #expect(metrics.contains("\nferry_feed_hold_known 1\n") && metrics.contains("ferry_feed_hold_over_limit 0"))
        print(
            "fault postgres-frozen: a request answered 503 after \(String(format: "%.2f", waited)) s, /readyz after \(String(format: "%.2f", probeWaited)) s"
        )
    }
}
