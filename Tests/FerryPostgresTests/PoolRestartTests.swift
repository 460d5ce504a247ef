import FerryHTTPTestSupport
import Foundation
import Synchronization
import FerryTestSupport
import Testing
@testable import FerryPostgres

/// Ferry must ride out a PostgreSQL restart without being restarted itself.
@Suite(.serialized) struct PoolRestartTests {
    /// One query attempt: when it ended and how (nil kind = success).
    struct Attempt: Sendable {
        let at: ContinuousClock.Instant
        let kind: PostgresError.Kind?
        let other: String?
    }

    @Test(.timeLimit(.minutes(2))) func poolSurvivesRestart() throws {
        let server = try TemporaryPostgres()
        defer { server.destroy() }
        let pool = PostgresPool(url: server.url, size: 4, acquireTimeout: .seconds(1), statementTimeoutMs: 5000)
        defer { pool.close() }
        #expect(try pool.withConnection { try $0.query("SELECT 1").first?[0] } == "1")

        let attempts = Collector<Attempt>()
        let running = Atomic<Bool>(true)
        let timeline = Mutex<(stopping: ContinuousClock.Instant, restarted: ContinuousClock.Instant)?>(nil)
        let controlErrors = Collector<String>()
        // The controller restarts the server while the load below keeps querying.
        let controller = Thread {
            defer { running.store(false, ordering: .relaxed) }
            do {
                try waitUntil("the load to be served before the restart") { attempts.all.contains { $0.kind == nil } }
                let stopping = ContinuousClock.now
                try server.stop(mode: "fast")
                // A real sleep: the outage's length is the fault under test (2 s of failed
                // connects, longer than the pool's acquire timeout); the errors are checked below.
                Thread.sleep(forTimeInterval: 2)
                try server.start()
                let restarted = ContinuousClock.now
                timeline.withLock { $0 = (stopping, restarted) }
                // The load runs on after the restart, the window in which the test looks for
                // errors that go on too long and for enough successes: at least 4 s, and until
                // 60 successes follow the last failure (a loaded machine serves fewer in 4 s).
                try waitUntil("60 successes after the last failure", within: 60) {
                    let all = attempts.all
                    let lastFailure = all.filter { $0.kind != nil || $0.other != nil }.map(\.at).max() ?? stopping
                    return ContinuousClock.now > restarted + .seconds(4)
                        && all.filter { $0.kind == nil && $0.other == nil && $0.at > lastFailure }.count > 60
                }
            } catch {
                controlErrors.append("\(error)")
            }
        }
        controller.start()
        let finished = runOnThreads(8, timeout: .seconds(90)) { index in
            while running.load(ordering: .relaxed) {
                do {
                    let value = try pool.withConnection { connection in
                        try connection.pipeline([
                            PostgresStatement("SELECT set_config('ferry.worker', $1, true)", [String(index)]),
                            PostgresStatement("SELECT current_setting('ferry.worker') AS w"),
                        ])[1].first?["w"]
                    }
                    let wrong = value == String(index) ? nil : "wrong value \(value ?? "nil")"
                    attempts.append(Attempt(at: .now, kind: nil, other: wrong))
                } catch let error as PostgresError {
                    attempts.append(Attempt(at: .now, kind: error.kind, other: nil))
                } catch {
                    attempts.append(Attempt(at: .now, kind: nil, other: "\(error)"))
                }
                // A real sleep: it paces the load; it waits for nothing.
                usleep(2000)
            }
        }
        #expect(finished, "load threads hung")
        #expect(controlErrors.all.isEmpty, "\(controlErrors.all)")
        let (stopping, restarted) = try #require(timeline.withLock { $0 })

        let all = attempts.all
        let failures = all.filter { $0.kind != nil || $0.other != nil }
        let unexpected = failures.filter { $0.other != nil || ($0.kind != .connection && $0.kind != .poolTimeout) }
        #expect(unexpected.isEmpty, "unexpected outcomes: \(unexpected.prefix(5).map { "\($0.kind.map(\.rawValue) ?? "-") \($0.other ?? "")" })")
        #expect(all.contains { $0.kind == nil && $0.at < stopping }, "no successes before the restart")
        #expect(!failures.isEmpty, "the outage produced no errors; the test did not exercise anything")
        let lastFailure = failures.map(\.at).max() ?? stopping
        #expect(lastFailure < restarted + .seconds(10), "errors continued \(lastFailure - restarted) after restart")
        let recovered = all.filter { $0.at > lastFailure }
        #expect(recovered.count > 50, "too few successes after recovery: \(recovered.count)")
        print(
            "restart: \(all.count) attempts, \(failures.count) failed (\(failures.filter { $0.kind == .connection }.count) connection, \(failures.filter { $0.kind == .poolTimeout }.count) poolTimeout); last failure \(lastFailure - restarted) after restart returned; stats \(pool.stats)"
        )
    }

    @Test func temporaryServerLifecycle() throws {
        let server = try TemporaryPostgres()
        defer { server.destroy() }
        let connection = try PostgresConnection(url: server.url)
        #expect(try connection.query("SHOW server_version_num").first?.int(0) ?? 0 >= 150000)
        try server.restart()
        #expect(postgresError { try connection.query("SELECT 1") }?.kind == .connection)
        #expect(try PostgresConnection(url: server.url).query("SELECT 2").first?[0] == "2")
    }
}
