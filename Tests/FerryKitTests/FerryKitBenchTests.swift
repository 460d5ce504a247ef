@testable import FerryKit
import FerryTestSupport
import Foundation
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
        let transport = FaultyTransport(URLSessionTransport(baseURL: server.baseURL))
        let engine = SyncEngine(store: store, transport: transport, token: alice.token)
        let rssBefore = Self.peakRSS()
        let start = Date()
        try await engine.sync()
        let seconds = Date().timeIntervalSince(start)
        let received = try store.rows("terms").count + store.rows("study_sets").count
        let bytes = transport.answers.reduce(0) { $0 + $1.body.count }
        print("ferrykit-bench: initial sync of \(received) rows (\(sets) sets, \(Self.rows) terms): \(String(format: "%.2f", seconds)) s, "
              + "\(transport.delivered.count) requests, \(bytes) response bytes, peak RSS \(String(format: "%.0f", Self.peakRSS())) MiB "
              + "(\(String(format: "%.0f", rssBefore)) MiB before)")
        #expect(received == Self.rows + sets)
    }

    @Test func tenThousandOfflineEditsAcrossAThousandRows() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let store = try FerryStore(path: ":memory:")
        let transport = FaultyTransport(URLSessionTransport(baseURL: server.baseURL))
        let engine = SyncEngine(store: store, transport: transport, token: alice.token)
        try await engine.sync()
        let set = try store.create("study_sets", ["title": .string("bench")])
        var ids: [String] = []
        for i in 0..<1_000 { ids.append(try store.create("terms", ["set_id": .string(set), "word": .string("w\(i)"), "rank": .string("U")])) }
        try await engine.sync()
        let before = transport.delivered.count
        for edit in 0..<10_000 {
            try store.update("terms", id: ids[edit % ids.count], [edit % 2 == 0 ? "word" : "definition": .string("edit \(edit)")])
        }
        let start = Date()
        try await engine.sync()
        let seconds = Date().timeIntervalSince(start)
        let writes = transport.delivered[before...].filter { $0.method != "GET" }.count
        print("ferrykit-bench: 10,000 offline edits across 1,000 rows uploaded in \(String(format: "%.2f", seconds)) s "
              + "with \(writes) write requests (\(transport.delivered.count - before) in all)")
        #expect(try store.pendingCount() == 0)
    }
}
