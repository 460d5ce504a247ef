import FerryHTTP
import FerryBase
import Synchronization

/// Requests counted by route pattern, method and status, with a latency
/// histogram per route pattern and method.
///
/// Keys are route patterns (`/v1/:resource/:id`), never raw paths, and methods
/// HTTP defines, any other counted as `OTHER` (a method is any token a client
/// sends, before it signs in), so the number of series stays bounded whatever
/// clients request.
///
/// Every request records here, from dozens of worker threads on few cores,
/// so the series are striped: each record takes one of several locks in
/// turn, and a thread preempted while holding one rarely blocks the others.
/// Reads add the stripes up.
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

    private final class Stripe: Sendable {
        let series = Locked<[Key: Series]>([:])
    }

    private let stripes: [Stripe] = (0..<8).map { _ in Stripe() }
    private let nextStripe = Atomic<Int>(0)

    public init() {}

    /// The methods counted by name (RFC 9110 §9 and PATCH); any other is `OTHER`.
    static let namedMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"]

    /// Records one answered request.
    public func record(route: String, method: String, status: Int, seconds: Double) {
        let bucket = Self.bucketBounds.firstIndex { seconds <= $0 } ?? Self.bucketBounds.count
        let key = Key(route: route, method: Self.namedMethods.contains(method) ? method : "OTHER")
        let turn = nextStripe.wrappingAdd(1, ordering: .relaxed).oldValue
        stripes[Int(UInt(bitPattern: turn) % UInt(stripes.count))].series.withLock { all in
            all[key, default: Series()].add(status: status, bucket: bucket, seconds: seconds)
        }
    }

    /// Every series, the stripes added up.
    private func merged() -> [Key: Series] {
        var total: [Key: Series] = [:]
        for stripe in stripes {
            for (key, series) in stripe.series.withLock({ $0 }) { total[key, default: Series()].merge(series) }
        }
        return total
    }

    /// How many requests were answered for a route and method with that status.
    public func count(route: String, method: String, status: Int) -> Int {
        stripes.reduce(0) { sum, stripe in
            sum + stripe.series.withLock { $0[Key(route: route, method: method)]?.statuses[status] ?? 0 }
        }
    }

    /// Every request answered so far on routes outside `prefix` (the console
    /// leaves its own out): how many, how many 4xx and 5xx, and their latency
    /// histogram (counts per ``bucketBounds``, the last one past them) and sum.
    func totals(excludingRoutesUnder prefix: String) -> Totals {
        var totals = Totals()
        for (key, series) in merged() where !key.route.hasPrefix(prefix) {
            for (status, count) in series.statuses {
                totals.total += count
                if status >= 500 { totals.serverErrors += count } else if status >= 400 { totals.clientErrors += count }
            }
            for index in series.buckets.indices { totals.buckets[index] += series.buckets[index] }
            totals.sum += series.sum
        }
        return totals
    }

    /// What ``totals(excludingRoutesUnder:)`` adds up.
    struct Totals {
        var total = 0
        var clientErrors = 0
        var serverErrors = 0
        var buckets = [Int](repeating: 0, count: RequestMetrics.bucketBounds.count + 1)
        var sum = 0.0
    }

    /// Writes the request counter and the latency histogram families.
    func write(to text: inout PrometheusText) {
        let snapshot = merged().sorted { $0.key < $1.key }
        text.family("ferry_http_requests_total", type: .counter, help: "HTTP requests answered, by route pattern, method and status.")
        for (key, series) in snapshot {
            for status in series.statuses.keys.sorted() {
                text.sample(
                    "ferry_http_requests_total",
                    labels: [("route", key.route), ("method", key.method), ("status", String(status))],
                    value: series.statuses[status] ?? 0)
            }
        }
        text.family(
            "ferry_http_request_duration_seconds", type: .histogram,
            help: "Time from a complete request to its response being ready, by route pattern and method.")
        for (key, series) in snapshot {
            text.histogram(
                "ferry_http_request_duration_seconds", labels: [("route", key.route), ("method", key.method)],
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

    mutating func merge(_ other: Self) {
        statuses.merge(other.statuses, uniquingKeysWith: +)
        for index in buckets.indices { buckets[index] += other.buckets[index] }
        sum += other.sum
    }
}
