import Ferry
import FerryHTTPTestSupport
import Foundation
import FerryTestSupport
import Testing

/// `GET /metrics` over real sockets: counters, histograms, gauges, build info.
@Suite struct MetricsTests {
    private func scrape(_ client: TestHTTPClient) throws -> PrometheusSamples {
        let response = try client.request("GET", "/metrics")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        return try PrometheusSamples(response.text)
    }

    @Test func requestsAreCountedByRoutePatternAndStatus() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        for _ in 0..<3 { #expect(try client.request("GET", "/healthz").status == 200) }
        for _ in 0..<2 {
            #expect(try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(alice.token)")]).status == 200)
        }
        #expect(try client.request("GET", "/v1/auth/me").status == 401)
        #expect(try client.request("GET", "/no/such/path-123").status == 404)
        // A method is any token a client sends, before it signs in: one series for all others.
        for method in ["M00000001XXXX", "M00000002XXXX", "get"] { #expect(try client.request(method, "/healthz").status == 405) }

        let first = try scrape(client)
        let requests = "ferry_http_requests_total"
        #expect(first.types[requests] == "counter")
        #expect(first.value(requests, ["route": "/healthz", "method": "GET", "status": "200"]) == 3)
        #expect(first.value(requests, ["route": "/v1/auth/me", "method": "GET", "status": "200"]) == 2)
        #expect(first.value(requests, ["route": "/v1/auth/me", "method": "GET", "status": "401"]) == 1)
        #expect(first.value(requests, ["route": "(unmatched)", "method": "GET", "status": "404"]) == 1)
        // Raw paths never become label values.
        #expect(!first.samples.contains { $0.labels.values.contains { $0.contains("path-123") } })
        let other = first.samples.filter { $0.name == requests && $0.labels["method"] == "OTHER" && $0.labels["status"] == "405" }
        #expect(other.map(\.value).reduce(0, +) == 3, "\(other)")
        #expect(!first.samples.contains { $0.labels["method"].map { $0.hasPrefix("M0") || $0 == "get" } ?? false })

        #expect(try client.request("GET", "/healthz").status == 200)
        let second = try scrape(client)
        #expect(second.value(requests, ["route": "/healthz", "method": "GET", "status": "200"]) == 4)
        // The first scrape is counted once it has been answered.
        #expect(second.value(requests, ["route": "/metrics", "method": "GET", "status": "200"]) == 1)
    }

    @Test func concurrentRecordsAddUpAcrossStripes() {
        let metrics = RequestMetrics()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for _ in 0..<1_000 {
                metrics.record(route: "/v1/:resource/:id", method: "GET", status: worker % 2 == 0 ? 200 : 304, seconds: 0.001)
            }
        }
        #expect(metrics.count(route: "/v1/:resource/:id", method: "GET", status: 200) == 4_000)
        #expect(metrics.count(route: "/v1/:resource/:id", method: "GET", status: 304) == 4_000)
        #expect(metrics.count(route: "/v1/:resource/:id", method: "PATCH", status: 200) == 0)
    }

    @Test func latencyHistogramIsCumulativePerRoute() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        for _ in 0..<3 {
            _ = try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(alice.token)")])
        }
        let samples = try scrape(client)
        let name = "ferry_http_request_duration_seconds"
        #expect(samples.types[name] == "histogram")
        let labels = ["route": "/v1/auth/me", "method": "GET"]
        let buckets = samples.all(name + "_bucket").filter { $0.labels["route"] == "/v1/auth/me" }
        #expect(buckets.count == RequestMetrics.bucketBounds.count + 1)
        let bounds = buckets.map { $0.labels["le"] == "+Inf" ? Double.infinity : Double($0.labels["le"] ?? "") ?? -1 }
        #expect(bounds == bounds.sorted() && bounds.last == .infinity)
        let counts = buckets.map(\.value)
        #expect(counts == counts.sorted(), "buckets must be cumulative: \(counts)")
        #expect(counts.last == 3)
        #expect(samples.value(name + "_count", labels) == 3)
        let sum = try #require(samples.value(name + "_sum", labels))
        #expect(sum > 0 && sum < 30)
    }

    @Test func gaugesCountersAndBuildInfo() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = server.client()
        server.app.metrics.changesPolls.increment()
        server.app.metrics.pagingSnapshotsCreated.increment(by: 2)
        server.app.metrics.memcachedHits.increment(by: 5)
        let samples = try scrape(client)
        #expect(samples.value("ferry_build_info", ["version": FerryVersion.current]) == 1)
        #expect(samples.value("ferry_build_info")?.isFinite == true)
        #expect(samples.all("ferry_build_info").first?.labels["libpq"] == FerryVersion.libpq)
        #expect(samples.value("ferry_changes_polls_total") == 1)
        #expect(samples.value("ferry_paging_snapshots_created_total") == 2)
        #expect(samples.value("ferry_memcached_hits_total") == 5)
        #expect(samples.value("ferry_memcached_misses_total") == 0)
        #expect(samples.value("ferry_memcached_errors_total") == 0)
        #expect(samples.value("ferry_db_pool_size") == 4)
        #expect((samples.value("ferry_db_pool_open") ?? 0) >= 1)
        #expect(samples.value("ferry_db_pool_in_use") == 0)
        #expect(samples.value("ferry_db_pool_waits_total") != nil)
        #expect(samples.value("ferry_db_pool_acquire_timeouts_total") == 0)
        #expect(samples.types["ferry_db_pool_waits_total"] == "counter")
        // This scrape's own connection and request.
        #expect((samples.value("ferry_http_open_connections") ?? 0) >= 1)
        #expect((samples.value("ferry_http_requests_in_flight") ?? 0) >= 1)
        #expect(samples.types["ferry_http_open_connections"] == "gauge")
        // The live feed's, which Sync hands FerryMetrics as a closure (`observe(live:)`).
        #expect(samples.value("ferry_live_waiters") == 0)
        #expect(samples.value("ferry_live_listening") != nil)
        #expect(samples.types["ferry_live_checks_total"] == "counter")
    }
}

/// Counters bumped by the features themselves, seen through `/metrics`.
@Suite struct FeatureMetricsTests {
    @Test func pagingCountsSnapshotsAndMemcachedTraffic() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let auth = ("Authorization", "Bearer \(alice.token)")
        let set = UUID().uuidString.lowercased()
        #expect(try client.request("POST", "/v1/study_sets", headers: [auth], json: ["id": set, "title": "m"]).status == 201)
        let terms = (0..<30).map { ["set_id": set, "word": "w\($0)"] }
        #expect(try client.request("POST", "/v1/terms", headers: [auth], json: terms).status == 201)

        let first = try client.request("GET", "/v1/terms?set_id=\(set)&limit=10", headers: [auth])
        #expect(first.status == 200)
        let next = try #require((first.object["paging"] as? [String: Any])?["next"] as? String)
        #expect(try client.request("GET", next, headers: [auth]).status == 200)
        let missing = next.replacingOccurrences(of: "paging_token=", with: "paging_token=x")
        _ = try client.request("GET", missing, headers: [auth])

        let samples = try PrometheusSamples(try client.request("GET", "/metrics").text)
        #expect(samples.value("ferry_paging_snapshots_created_total") == 1)
        #expect((samples.value("ferry_memcached_hits_total") ?? 0) >= 2, "the header and a chunk of page 2")
        #expect(samples.value("ferry_memcached_errors_total") == 0)
        #expect(samples.value("ferry_http_requests_total", ["route": "/v1/:resource", "method": "GET", "status": "200"]) == 2)
    }
}
