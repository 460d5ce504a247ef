import Synchronization

/// Requests counted by route pattern, method and status, with a latency
/// histogram per route pattern and method.
///
/// Keys are route patterns (`/v1/:resource/:id`), never raw paths, so the
/// number of series stays bounded whatever clients request.
public final class RequestMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    public static let bucketBounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct Key: Hashable, Comparable {
        let route: String
        let method: String
        static func < (a: Key, b: Key) -> Bool { (a.route, a.method) < (b.route, b.method) }
    }

    struct Series {
        var statuses: [Int: Int] = [:]
        var buckets = [Int](repeating: 0, count: RequestMetrics.bucketBounds.count + 1)
        var sum = 0.0
    }

    private let series = Mutex<[Key: Series]>([:])

    /// Empty metrics.
    public init() {}

    /// Records one answered request.
    public func record(route: String, method: String, status: Int, seconds: Double) {
        let bucket = Self.bucketBounds.firstIndex { seconds <= $0 } ?? Self.bucketBounds.count
        series.withLock { all in
            all[Key(route: route, method: method), default: Series()].add(status: status, bucket: bucket, seconds: seconds)
        }
    }

    /// How many requests were answered for a route and method with that status.
    public func count(route: String, method: String, status: Int) -> Int {
        series.withLock { $0[Key(route: route, method: method)]?.statuses[status] ?? 0 }
    }

    /// Writes the request counter and the latency histogram families.
    func write(to text: inout PrometheusText) {
        let snapshot = series.withLock { $0 }.sorted { $0.key < $1.key }
        text.family("ferry_http_requests_total", type: .counter, help: "HTTP requests answered, by route pattern, method and status.")
        for (key, series) in snapshot {
            for status in series.statuses.keys.sorted() {
                text.sample("ferry_http_requests_total",
                            labels: [("route", key.route), ("method", key.method), ("status", String(status))],
                            value: series.statuses[status] ?? 0)
            }
        }
        text.family("ferry_http_request_duration_seconds", type: .histogram,
                    help: "Time from a complete request to its response being ready, by route pattern and method.")
        for (key, series) in snapshot {
            text.histogram("ferry_http_request_duration_seconds", labels: [("route", key.route), ("method", key.method)],
                           bounds: Self.bucketBounds, counts: series.buckets, sum: series.sum)
        }
    }
}

extension RequestMetrics.Series {
    mutating func add(status: Int, bucket: Int, seconds: Double) {
        statuses[status, default: 0] += 1
        buckets[bucket] += 1
        sum += seconds
    }
}
