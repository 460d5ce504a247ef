@testable import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

/// Issue 19's benchmarks, run by `bench/ferrykit.sh` (`FERRYKIT_BENCH=1`); in a
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

    @Test func initialSyncOfAHundredThousandRows() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let sets = Self.rows / 100
        let owner = try server.database.connect()
        _ = try owner.query("INSERT INTO app.study_sets (creator_id, title) SELECT $1::uuid, 'set ' || i FROM generate_series(1, $2::int) i",
                            [alice.userID, String(sets)])
        _ = try owner.query("""
            INSERT INTO app.terms (set_id, word, definition, rank)
            SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
              FROM app.study_sets s CROSS JOIN generate_series(1, 100) i
            """)
        owner.close()
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
        print("ferrykit-bench: initial sync of \(received) rows (\(sets) sets, \(Self.rows) terms): \(String(format: "%.2f", seconds)) s, "
              + "\(requests) requests, \(bytes) response bytes, peak RSS \(String(format: "%.0f", peak)) MiB "
              + "(\(String(format: "%.0f", rssBefore)) MiB before)")
        #expect(received == Self.rows + sets)

        // Steady state: nothing changed, so a sync is the feed's 304 check alone.
        try await engine.sync()
        let (after, afterBytes) = transport.totals
        print("ferrykit-bench: a sync with nothing to do: \(after - requests) request(s), \(afterBytes - bytes) response body bytes, "
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
        print("ferrykit-bench: 10,000 offline edits across 1,000 rows written locally in \(String(format: "%.2f", local)) s, "
              + "uploaded in \(String(format: "%.2f", seconds)) s "
              + "with \(sent.filter { $0.key != "GET" }.values.reduce(0, +)) write requests (\(sent.sorted { $0.key < $1.key }))")
        #expect(try store.pendingCount() == 0)
    }
}

/// Counts requests and answer bytes without keeping them: a benchmark's own
/// bookkeeping must not show up in its peak memory.
final class CountingTransport: Transport {
    let inner: any Transport
    private let state = Mutex<(requests: Int, bytes: Int, lastStatus: Int, byMethod: [String: Int], lastHeadBytes: Int)>((0, 0, 0, [:], 0))

    init(_ inner: any Transport) { self.inner = inner }

    var totals: (requests: Int, bytes: Int) { state.withLock { ($0.requests, $0.bytes) } }
    var lastStatus: Int { state.withLock { $0.lastStatus } }
    var byMethod: [String: Int] { state.withLock { $0.byMethod } }
    /// The last answer's head as it came over the wire, estimated from its
    /// status line and headers (URLSession does not hand out the raw bytes).
    var lastHeadBytes: Int { state.withLock { $0.lastHeadBytes } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await inner.send(request)
        state.withLock {
            $0.requests += 1
            $0.bytes += response.body.count
            $0.lastStatus = response.status
            $0.lastHeadBytes = "HTTP/1.1 \(response.status) \r\n\r\n".utf8.count
                + response.headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
            $0.byMethod[request.method, default: 0] += 1
        }
        return response
    }
}
