// Round-trip benchmark for FerryPostgres, built by bench/pg-roundtrip/pg-roundtrip.sh together with the
// module's sources (not a SwiftPM target, so it never slows down `swift build`).
//
// Shape measured: one Ferry request = BEGIN; set_config(user id); SELECT; COMMIT.
import Foundation

let url = ProcessInfo.processInfo.environment["FERRY_TEST_OWNER_URL"] ?? ""
guard !url.isEmpty else {
    FileHandle.standardError.write(Data("FERRY_TEST_OWNER_URL is not set\n".utf8))
    exit(2)
}
let iterations = Int(ProcessInfo.processInfo.environment["BENCH_ITERATIONS"] ?? "") ?? 5000
let threads = Int(ProcessInfo.processInfo.environment["BENCH_THREADS"] ?? "") ?? 4

let selectSQL = "SELECT $1::int AS id, current_setting('ferry.user_id') AS who"
let setSQL = "SELECT set_config('ferry.user_id', $1, true)"

func separate(_ connection: PostgresConnection, _ index: Int) throws {
    _ = try connection.query("BEGIN")
    _ = try connection.query(setSQL, ["user-\(index)"])
    let row = try connection.query(selectSQL, [String(index)]).first
    _ = try connection.query("COMMIT")
    precondition(row?["who"] == "user-\(index)")
}

func pipelined(_ connection: PostgresConnection, _ index: Int) throws {
    let results = try connection.pipeline([
        PostgresStatement(setSQL, ["user-\(index)"]),
        PostgresStatement(selectSQL, [String(index)]),
    ])
    precondition(results[1].first?["who"] == "user-\(index)")
}

/// Runs `body` `iterations` times on one connection; returns microseconds per call.
func measure(_ label: String, prepared: Bool, _ body: (PostgresConnection, Int) throws -> Void) throws {
    let connection = try PostgresConnection(url: url, preparedStatements: prepared)
    for index in 0..<200 { try body(connection, index) }
    let started = ContinuousClock.now
    for index in 0..<iterations { try body(connection, index) }
    let elapsed = ContinuousClock.now - started
    let micros = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
    let perCall = micros / Double(iterations)
    print(label.padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: "%8.1f µs/request %9.0f requests/s", perCall, 1e6 / perCall))
}

/// Runs `threads` threads sharing a pool of `threads` connections; reports total throughput.
func measurePool(_ label: String, prepared: Bool, _ body: @escaping @Sendable (PostgresConnection, Int) throws -> Void) {
    let pool = PostgresPool(url: url, size: threads, acquireTimeout: .seconds(10), statementTimeoutMs: 5000, preparedStatements: prepared)
    let group = DispatchGroup()
    let started = ContinuousClock.now
    for thread in 0..<threads {
        group.enter()
        Thread {
            for index in 0..<iterations { try! pool.withConnection { try body($0, thread * iterations + index) } }
            group.leave()
        }.start()
    }
    group.wait()
    let elapsed = ContinuousClock.now - started
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(
        label.padding(toLength: 40, withPad: " ", startingAt: 0)
            + String(format: "%3d threads      %9.0f requests/s", threads, Double(threads * iterations) / seconds))
    pool.close()
}

print("libpq \(libpqVersion), \(iterations) requests per measurement (BEGIN; set_config; SELECT; COMMIT)")
try measure("separate round trips (4), unnamed", prepared: false, separate)
try measure("separate round trips (4), prepared", prepared: true, separate)
try measure("pipeline (1 round trip), unnamed", prepared: false, pipelined)
try measure("pipeline (1 round trip), prepared", prepared: true, pipelined)
measurePool("pool, separate round trips, unnamed", prepared: false, separate)
measurePool("pool, pipeline, unnamed", prepared: false, pipelined)
measurePool("pool, pipeline, prepared", prepared: true, pipelined)
