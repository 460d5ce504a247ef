import Dispatch
import FerryPostgres
import FerryTestSupport
import Foundation
import Synchronization

/// What the race's writers did, shared between their threads.
final class RaceLedger: Sendable {
    private struct State {
        var committed: [String] = []
        var rolledBack: Set<String> = []
        var commits = 0
        var rollbacks = 0
        var failures = 0
    }
    private let state = Mutex(State())

    func committed(_ ids: [String]) {
        state.withLock {
            $0.committed += ids; $0.commits += 1
        }
    }
    func rolledBack(_ ids: [String], failed: Bool = false) {
        state.withLock {
            $0.rolledBack.formUnion(ids)
            if failed { $0.failures += 1 } else { $0.rollbacks += 1 }
        }
    }
    func randomCommitted() -> String? { state.withLock { $0.committed.randomElement() } }
    var rolledBackIDs: Set<String> { state.withLock { $0.rolledBack } }
    var counts: (commits: Int, rollbacks: Int, failures: Int) { state.withLock { ($0.commits, $0.rollbacks, $0.failures) } }
}

/// A writer connection acting as one user through the serve role (RLS applies).
struct RaceWriter {
    let url: String
    let userID: String
    let setID: String
    let ledger: RaceLedger
    /// Longest hold of a "long" transaction, in ms.
    let maxHoldMs: Int

    /// Connects, waits at `gate` for every writer to be connected, then runs
    /// transactions of random length until the window's end: inserts and
    /// updates of terms, sometimes a soft delete; some held long, some rolled back.
    func run(_ gate: StartGate) {
        let connection = try? PostgresConnection(url: url)
        _ = try? connection?.query("SELECT set_config('ferry.user_id', $1, false), set_config('lock_timeout', '300ms', false)", [userID])
        let end = gate.arrive()
        guard let connection else {
            ledger.rolledBack([], failed: true)
            return
        }
        defer { connection.close() }
        while Date() < end {
            var inserted: [String] = []
            do {
                try connection.execute("BEGIN")
                for _ in 0..<Int.random(in: 1...4) {
                    let roll = Double.random(in: 0..<1)
                    if roll < 0.5 || ledger.randomCommitted() == nil {
                        let id = UUID().uuidString.lowercased()
                        _ = try connection.query(
                            "INSERT INTO app.terms (id, set_id, word) VALUES ($1, $2, $3)",
                            [id, setID, "w\(Int.random(in: 0..<1_000_000))"])
                        inserted.append(id)
                    } else if roll < 0.95 {
                        _ = try connection.query(
                            "UPDATE app.terms SET word = $2 WHERE id = $1",
                            [ledger.randomCommitted(), "u\(Int.random(in: 0..<1_000_000))"])
                    } else {
                        _ = try connection.query("UPDATE app.terms SET is_deleted = true WHERE id = $1", [ledger.randomCommitted()])
                    }
                }
                let long = Double.random(in: 0..<1) < 0.1
                let holdMs = long ? Int.random(in: (maxHoldMs / 3)...maxHoldMs) : Int.random(in: 0...30)
                // A real sleep: a transaction held open while others commit is the race under test.
                Thread.sleep(forTimeInterval: Double(holdMs) / 1000)
                if Double.random(in: 0..<1) < 0.15 {
                    try connection.execute("ROLLBACK")
                    ledger.rolledBack(inserted)
                } else {
                    try connection.execute("COMMIT")
                    ledger.committed(inserted)
                }
            } catch {
                _ = try? connection.execute("ROLLBACK")
                ledger.rolledBack(inserted, failed: true)
            }
        }
    }
}

/// Starts a race's clock once every writer is connected: on a loaded machine a
/// writer still connecting when a clock started beforehand ran out committed
/// nothing (issue 49: "the race needs commits and rollbacks (commits: 0)").
final class StartGate: Sendable {
    private let ready = DispatchSemaphore(value: 0)
    private let go = DispatchSemaphore(value: 0)
    private let end = Mutex(Date.distantFuture)
    private let writers: Int

    init(writers: Int) { self.writers = writers }

    /// A writer is connected: waits for the clock, and returns its window's end.
    func arrive() -> Date {
        ready.signal()
        go.wait()
        go.signal()
        return end.withLock { $0 }
    }

    /// Waits for every writer to arrive, then starts a window of `seconds`.
    func start(seconds: Double) {
        for _ in 0..<writers { ready.wait() }
        end.withLock { $0 = Date().addingTimeInterval(seconds) }
        go.signal()
    }
}

/// Runs `bodies` on their own threads and waits for all of them.
func onThreads(_ bodies: [@Sendable () -> Void]) -> DispatchGroup {
    let group = DispatchGroup()
    for body in bodies {
        group.enter()
        Thread.detachNewThread {
            body()
            group.leave()
        }
    }
    return group
}
