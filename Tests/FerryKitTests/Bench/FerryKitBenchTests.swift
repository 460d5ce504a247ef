@testable import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

/// Issue 19's benchmarks, run by `bench/ferrykit/ferrykit.sh` (`FERRYKIT_BENCH=1`); in a
/// plain test run they are skipped. They print figures and assert only that the
/// work was done: timing belongs to the benchmark's report, not to CI.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["FERRYKIT_BENCH"] != nil), .serialized)
struct FerryKitBenchTests {
    static var rows: Int { Int(ProcessInfo.processInfo.environment["FERRYKIT_BENCH_ROWS"] ?? "") ?? 100_000 }

    /// Peak resident memory of this process so far, in MiB (`VmHWM`).
    static func peakRSS() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
    }

    /// `rows` terms in sets of 100, owned by `user`.
    static func seed(_ server: FerryServer, for user: String) throws {
        let owner = try server.database.connect()
        defer { owner.close() }
        _ = try owner.query(
            "INSERT INTO app.study_sets (creator_id, title) SELECT $1::uuid, 'set ' || i FROM generate_series(1, $2::int) i",
            [user, String(rows / 100)])
        _ = try owner.query(
            """
            INSERT INTO app.terms (set_id, word, definition, rank)
            SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
              FROM app.study_sets s CROSS JOIN generate_series(1, 100) i
            """)
    }

    /// The id of the set whose terms the last Index pages bring.
    static func aSet(_ server: FerryServer) throws -> String {
        let owner = try server.database.connect()
        defer { owner.close() }
        return try owner.query("SELECT id::text FROM app.study_sets ORDER BY id DESC LIMIT 1").rows.first?[0] ?? ""
    }

    @Test func initialSyncOfAHundredThousandRows() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let sets = Self.rows / 100
        try Self.seed(server, for: alice.userID)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-bench-\(UUID()).sqlite").path
        defer { _ = try? FerryStore.signOut(path: path, discardingUnsynced: true) }
        let store = try FerryStore(path: path)
        let transport = CountingTransport(URLSessionTransport(baseURL: server.baseURL))
        let engine = SyncEngine(store: store, transport: transport, token: alice.token)
        let rssBefore = Self.peakRSS()
        let start = Date()
        try await engine.sync()
        let seconds = Date().timeIntervalSince(start)
        let peak = Self.peakRSS()
        let (requests, bytes) = transport.totals
        let received = try await store.database.read { db in
            try (Int.fetchOne(db, sql: "SELECT count(*) FROM terms") ?? 0) + (Int.fetchOne(db, sql: "SELECT count(*) FROM study_sets") ?? 0)
        }
        print(
            "ferrykit-bench: initial sync of \(received) rows (\(sets) sets, \(Self.rows) terms): \(String(format: "%.2f", seconds)) s, "
                + "\(requests) requests, \(bytes) response bytes, peak RSS \(String(format: "%.0f", peak)) MiB "
                + "(\(String(format: "%.0f", rssBefore)) MiB before)")
        #expect(received == Self.rows + sets)
        print("ferrykit-bench: " + transport.pageTimes())

        // Steady state: nothing changed, so a sync is the feed's 304 check alone.
        try await engine.sync()
        let (after, afterBytes) = transport.totals
        print(
            "ferrykit-bench: a sync with nothing to do: \(after - requests) request(s), \(afterBytes - bytes) response body bytes, "
                + "about \(transport.lastHeadBytes) bytes of status line and headers, last status \(transport.lastStatus)")
        #expect(after - requests == 1 && transport.lastStatus == 304)
    }

    @Test func tenThousandOfflineEditsAcrossAThousandRows() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let store = try FerryStore(path: ":memory:")
        let transport = CountingTransport(URLSessionTransport(baseURL: server.baseURL))
        let engine = SyncEngine(store: store, transport: transport, token: alice.token)
        try await engine.sync()
        let set = try store.create("study_sets", ["title": .string("bench")])
        var ids: [String] = []
        for i in 0..<1_000 { ids.append(try store.create("terms", ["set_id": .string(set), "word": .string("w\(i)"), "rank": .string("U")])) }
        try await engine.sync()
        let before = transport.byMethod
        let writing = Date()
        for edit in 0..<10_000 {
            try store.update("terms", id: ids[edit % ids.count], [edit % 2 == 0 ? "word" : "definition": .string("edit \(edit)")])
        }
        let local = Date().timeIntervalSince(writing)
        let start = Date()
        try await engine.sync()
        let seconds = Date().timeIntervalSince(start)
        let sent = transport.byMethod.merging(before) { $0 - $1 }.filter { $0.value > 0 }
        print(
            "ferrykit-bench: 10,000 offline edits across 1,000 rows written locally in \(String(format: "%.2f", local)) s, "
                + "uploaded in \(String(format: "%.2f", seconds)) s "
                + "with \(sent.filter { $0.key != "GET" }.values.reduce(0, +)) write requests (\(sent.sorted { $0.key < $1.key }))")
        #expect(try store.pendingCount() == 0)
    }
}

extension FerryKitBenchTests {
    /// Issue 35's read latency: while an initial sync of `rows` terms runs, a
    /// thread that stands for the app's main thread reads the 100 terms of a
    /// set, in rank order, every 5 ms; each read's time, as the pool (WAL) and as the
    /// serial queue FerryKit used before, one after the other on the same data.
    @Test func aMainThreadReadDuringAnInitialSync() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        try Self.seed(server, for: alice.userID)
        for access in [FerryStore.Access.queue, .pool] {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-reads-\(UUID()).sqlite").path
            defer { _ = try? FerryStore.signOut(path: path, discardingUnsynced: true) }
            let store = try FerryStore(path: path, access: access)
            let engine = SyncEngine(store: store, transport: URLSessionTransport(baseURL: server.baseURL), token: alice.token)
            try await engine.refreshSchema()
            let reader = ReadSampler(store: store, set: try Self.aSet(server))
            reader.start()
            let start = Date()
            try await engine.sync()
            let seconds = Date().timeIntervalSince(start)
            let latencies = reader.stop().sorted()
            let count = try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM terms") ?? 0 }
            #expect(count == Self.rows && latencies.count > 10)
            func percentile(_ p: Double) -> Double {
                latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] * 1_000
            }
            print(
                "ferrykit-bench: reads during an initial sync of \(count) terms, \(access == .pool ? "pool (WAL)" : "queue"): "
                    + "\(latencies.count) reads of 100 rows, p50 \(String(format: "%.2f", percentile(0.5))) ms, "
                    + "p99 \(String(format: "%.2f", percentile(0.99))) ms, max \(String(format: "%.2f", (latencies.last ?? 0) * 1_000)) ms; "
                    + "the sync took \(String(format: "%.2f", seconds)) s")
        }
    }
}

/// A thread that reads 100 rows every 5 ms, as an app's screen would, and
/// keeps each read's duration.
final class ReadSampler: Sendable {
    let store: FerryStore
    private let state = Mutex<(running: Bool, latencies: [Double], done: Bool)>((false, [], false))

    let set: String

    init(store: FerryStore, set: String) { (self.store, self.set) = (store, set) }

    func start() {
        state.withLock { $0.running = true }
        let thread = Thread { [self] in
            while state.withLock({ $0.running }) {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try? store.database.read { db in
                    try Row.fetchAll(db, sql: "SELECT * FROM terms WHERE set_id = ? ORDER BY rank, id LIMIT 100", arguments: [set])
                }
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                state.withLock { $0.latencies.append(elapsed) }
                // A real sleep: the screen's pace between reads.
                Thread.sleep(forTimeInterval: 0.005)
            }
            state.withLock { $0.done = true }
        }
        thread.start()
    }

    /// Stops the thread and returns the durations, in seconds.
    func stop() -> [Double] {
        state.withLock { $0.running = false }
        while !state.withLock({ $0.done }) { Thread.sleep(forTimeInterval: 0.001) }
        return state.withLock { $0.latencies }
    }
}

/// Counts requests and answer bytes without keeping them: a benchmark's own
/// bookkeeping must not show up in its peak memory.
final class CountingTransport: Transport {
    let inner: any Transport
    private let state = Mutex<(requests: Int, bytes: Int, lastStatus: Int, byMethod: [String: Int], lastHeadBytes: Int)>((0, 0, 0, [:], 0))
    /// Each request's start and end, in seconds of uptime and of this process's CPU: a few hundred.
    private let spans = Mutex<[(start: Double, end: Double, cpuStart: Double, cpuEnd: Double)]>([])

    init(_ inner: any Transport) { self.inner = inner }

    var totals: (requests: Int, bytes: Int) { state.withLock { ($0.requests, $0.bytes) } }
    var lastStatus: Int { state.withLock { $0.lastStatus } }
    var byMethod: [String: Int] { state.withLock { $0.byMethod } }
    /// The last answer's head as it came over the wire, estimated from its
    /// status line and headers (URLSession does not hand out the raw bytes).
    var lastHeadBytes: Int { state.withLock { $0.lastHeadBytes } }

    /// Where an initial sync's time went: waiting on the server (each request,
    /// from send to the whole answer) and the client's own (from one answer to
    /// the next request: decoding and applying the page), in wall-clock time
    /// and in this process's CPU time (which a busy machine's other processes
    /// do not inflate); in total and per request over the first and the last
    /// tenth of the requests, so that a cost growing with the store or with
    /// the server's table shows which side it is on.
    func pageTimes() -> String {
        let spans = spans.withLock { $0 }
        guard spans.count > 2 else { return "too few requests to split" }
        let server = spans.map { $0.end - $0.start }
        let client = zip(spans, spans.dropFirst()).map { $1.start - $0.end }
        let clientCPU = zip(spans, spans.dropFirst()).map { $1.cpuStart - $0.cpuEnd }
        let tenth = max(1, client.count / 10)
        func ms(_ values: some Collection<Double>) -> String { String(format: "%.1f", values.reduce(0, +) / Double(values.count) * 1_000) }
        func s(_ values: [Double]) -> String { String(format: "%.2f", values.reduce(0, +)) }
        return "time waiting on the server \(s(server)) s, the client's own \(s(client)) s (\(s(clientCPU)) s of CPU); "
            + "per request, first tenth: server \(ms(server.prefix(tenth))) ms, client \(ms(client.prefix(tenth))) ms "
            + "(CPU \(ms(clientCPU.prefix(tenth))) ms); last tenth: server \(ms(server.dropLast().suffix(tenth))) ms, "
            + "client \(ms(client.suffix(tenth))) ms (CPU \(ms(clientCPU.suffix(tenth))) ms)"
    }

    /// This process's CPU time so far, in seconds.
    static func cpuTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let (start, cpuStart) = (Double(DispatchTime.now().uptimeNanoseconds) / 1e9, Self.cpuTime())
        let response = try await inner.send(request)
        let (end, cpuEnd) = (Double(DispatchTime.now().uptimeNanoseconds) / 1e9, Self.cpuTime())
        spans.withLock { $0.append((start, end, cpuStart, cpuEnd)) }
        state.withLock {
            $0.requests += 1
            $0.bytes += response.body.count
            $0.lastStatus = response.status
            $0.lastHeadBytes =
                "HTTP/1.1 \(response.status) \r\n\r\n".utf8.count
                + response.headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
            $0.byMethod[request.method, default: 0] += 1
        }
        return response
    }
}
