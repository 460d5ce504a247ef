@testable import FerryKit
import FerryTestSupport
import Foundation
import GRDB
import Testing

/// Issue 46's "subscribing to a public set of 5,000 terms: the rows are in the
/// device's store within 1 s", run by `bench/public-sets/subscribe-set.sh`, which seeds the
/// set and serves it with a release `ferry serve` (FERRYKIT_BENCH_SERVER), so
/// this process is the device alone.
extension FerryKitBenchTests {
    /// Skipped unless bench/public-sets/subscribe-set.sh runs it (bench/ferrykit/ferrykit.sh runs the rest of the suite).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FERRYKIT_BENCH_SERVER"] != nil))
    func subscribingToAPublicSet() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let server = environment["FERRYKIT_BENCH_SERVER"].flatMap(URL.init(string:)), let token = environment["FERRYKIT_BENCH_TOKEN"],
            let set = environment["FERRYKIT_BENCH_SET"], let terms = environment["FERRYKIT_BENCH_TERMS"].flatMap(Int.init)
        else {
            Issue.record("run by bench/public-sets/subscribe-set.sh, which sets FERRYKIT_BENCH_SERVER, _TOKEN, _SET and _TERMS")
            return
        }
        let runs = Int(environment["FERRYKIT_BENCH_RUNS"] ?? "") ?? 5
        for run in 1...runs {
            // A device that already synced (its default stream: nothing), with a file store, as an app's.
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-bench-sub-\(UUID()).sqlite").path
            defer { _ = try? FerryStore.signOut(path: path, discardingUnsynced: true) }
            let store = try FerryStore(path: path)
            let transport = CountingTransport(URLSessionTransport(baseURL: server))
            let engine = SyncEngine(store: store, transport: transport, token: token)
            try await engine.sync()
            let before = transport.totals

            // The user opens the set: subscribed, and synced until its rows are in the store.
            let start = Date()
            let subscription = try await engine.subscribe(stream: "set", id: set, ttl: .days(7), priority: .high)
            try await engine.sync()
            let seconds = Date().timeIntervalSince(start)
            let after = transport.totals
            let stored = try await store.database.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM terms WHERE set_id = ?", arguments: [set]) ?? 0
            }
            print(
                "ferrykit-bench: run \(run): subscribed to a public set of \(stored) terms, in the store in "
                    + "\(String(format: "%.3f", seconds)) s (subscribe and one sync: \(after.requests - before.requests) requests, "
                    + "\(after.bytes - before.bytes) response bytes); " + transport.pageTimes())
            #expect(stored == terms)
            #expect(try subscription.state() == .synced)
        }
    }
}
