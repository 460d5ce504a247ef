import FerryBase
import FerryHTTP
import FerryPostgres

/// Ferry's metrics registry, rendered at `GET /metrics`.
///
/// Features bump the counters they own (paging bumps `pagingSnapshotsCreated`,
/// the changes feed `changesPolls`, the memcached user `memcachedHits` and so
/// on); gauges are read from the server and the pool at scrape time, so they
/// cost nothing between scrapes.
public final class FerryMetrics: Sendable {
    /// Requests by route and status, and their latency.
    public let requests = RequestMetrics()
    /// memcached gets that found their item.
    public let memcachedHits = MetricCounter()
    /// memcached gets that found nothing.
    public let memcachedMisses = MetricCounter()
    /// memcached operations that failed (server down, timeout).
    public let memcachedErrors = MetricCounter()
    /// Paging snapshots stored in memcached.
    public let pagingSnapshotsCreated = MetricCounter()
    /// Changes-feed requests answered.
    public let changesPolls = MetricCounter()

    private let server = Locked<HTTPServer?>(nil)
    private let pool = Locked<PostgresPool?>(nil)
    /// The gauges of features that come after Metrics (the changes feed's hold,
    /// the live feed's waiters; `observe(feedHold:)` and `observe(live:)` in
    /// Sync), written at scrape time in the order they were observed. Closures
    /// because Metrics may not name them (docs/ARCHITECTURE.md, "One
    /// direction"); a scrape calls each once, a request never.
    private let gauges = Locked<[@Sendable (inout PrometheusText) -> Void]>([])

    public init() {}

    /// Reads open connections and in-flight requests from `server` at scrape time.
    public func observe(server: HTTPServer) { self.server.withLock { $0 = server } }

    /// Reads the pool's size, use, waits and timeouts from `pool` at scrape time.
    public func observe(pool: PostgresPool) { self.pool.withLock { $0 = pool } }

    /// Calls `write` at every scrape, after the pool's gauges, to add a feature's gauges.
    func observe(gauges write: @escaping @Sendable (inout PrometheusText) -> Void) { gauges.withLock { $0.append(write) } }

    /// Open connections and requests in flight now, when a server is observed.
    var serverGauges: (open: Int, inFlight: Int)? {
        server.withLock { $0 }.map { ($0.openConnections, $0.inFlightRequests) }
    }

    /// The whole exposition, in the Prometheus text format 0.0.4.
    public func render() -> String {
        var text = PrometheusText()
        text.family("ferry_build_info", type: .gauge, help: "Ferry's version and the C libraries it links; always 1.")
        text.sample(
            "ferry_build_info",
            labels: [
                ("version", FerryVersion.current), ("libpq", FerryVersion.libpq), ("libmemcached", FerryVersion.libmemcached),
            ], value: 1)
        requests.write(to: &text)
        if let server = server.withLock({ $0 }) {
            text.family("ferry_http_open_connections", type: .gauge, help: "Client connections open now.")
            text.sample("ferry_http_open_connections", value: server.openConnections)
            text.family("ferry_http_requests_in_flight", type: .gauge, help: "Requests being answered now.")
            text.sample("ferry_http_requests_in_flight", value: server.inFlightRequests)
        }
        if let pool = pool.withLock({ $0 }) { Self.write(pool.stats, to: &text) }
        for write in gauges.withLock({ $0 }) { write(&text) }
        let counters: [(String, String, MetricCounter)] = [
            ("ferry_memcached_hits_total", "memcached gets that found their item.", memcachedHits),
            ("ferry_memcached_misses_total", "memcached gets that found nothing.", memcachedMisses),
            ("ferry_memcached_errors_total", "memcached operations that failed.", memcachedErrors),
            ("ferry_paging_snapshots_created_total", "Paging snapshots stored.", pagingSnapshotsCreated),
            ("ferry_changes_polls_total", "Changes-feed requests answered.", changesPolls),
        ]
        for (name, help, counter) in counters {
            text.family(name, type: .counter, help: help)
            text.sample(name, value: counter.value)
        }
        return text.output
    }

    static func write(_ stats: PoolStats, to text: inout PrometheusText) {
        let series =
            [
                ("ferry_db_pool_size", .gauge, "The most database connections the pool opens.", stats.size),
                ("ferry_db_pool_open", .gauge, "Database connections open now (idle or in use).", stats.open),
                ("ferry_db_pool_in_use", .gauge, "Database connections lent to requests now.", stats.inUse),
                ("ferry_db_pool_waiting", .gauge, "Requests waiting for a database connection now.", stats.waiting),
                ("ferry_db_pool_waits_total", .counter, "Times a request waited because every connection was in use.", stats.waits),
                ("ferry_db_pool_acquire_timeouts_total", .counter, "Times a request gave up waiting for a connection.", stats.acquireTimeouts),
                ("ferry_db_pool_connect_failures_total", .counter, "Failed connection attempts.", stats.connectFailures),
                ("ferry_db_pool_discarded_total", .counter, "Broken connections thrown away.", stats.discarded),
            ] as [(String, PrometheusText.MetricType, String, Int)]
        for (name, type, help, value) in series {
            text.family(name, type: type, help: help)
            text.sample(name, value: value)
        }
    }
}
