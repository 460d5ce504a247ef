@testable import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import FerryKitTestSupport

/// Devices that must converge under faults (issue 20): seeded runs against one
/// real `ferry serve`, each seed with its own users and files.
///
/// Not serialized: each test runs its seeds, one after another, on a scratch
/// database and a `ferry serve` of its own (a restart, a killed LISTEN
/// connection or a revocation touches only those), so the six overlap each
/// other and the other suites. Each request of a seed goes from a device to
/// its server to PostgreSQL and back, one after another, so one simulation
/// alone leaves a core of two idle. Side by side, with users from
/// ``FerryServer/quickUser(_:)``, the five took 83 s for 20 seeds each; one
/// after another, with `ferry user add`, 245 s (issue 49: the suite's long pole).
///
/// - `FERRY_SIM_SEEDS` (default 100): how many seeds, from `FERRY_SIM_FIRST` (default 1);
///   `FERRY_SIM_GRDB_SEEDS` (default 100): as many again with devices that write through GRDB;
///   `FERRY_SIM_TODO_SEEDS` (default 100): as many again on examples/todo's schema (issue 33:
///   an app on the sync rules alone), each on a server of its own.
///   `FERRY_SIM_LIVE_SEEDS` (default 100): as many again with devices in continuous mode.
///   `FERRY_SIM_SUBSCRIPTION_SEEDS` (default 100): as many again on public sets, with
///   devices subscribing and unsubscribing (issue 46).
///   `FERRY_SIM_LIVE_SUBSCRIPTION_SEEDS` (default 100): as many again, subscribing, in continuous mode.
/// - `FERRY_SIM_SEED`: run that one seed only (a failure prints it).
/// - `FERRY_SIM_DEVICES`, `FERRY_SIM_STEPS`: fix the device count (else 2 to 4
///   per seed) and the operations per seed (default 30).
/// - `FERRY_SIM_FAULTS`: the fault rate per request (default 0.2).
/// - `FERRY_SIM_RESTARTS=0`: never restart the server (a soak watches one process).
/// - `FERRY_SOAK_SAMPLES`: a file for one JSON line a minute (``SoakSampler``).
/// - `FERRY_SIM_FAILURES`: a file each failing seed's report is appended to at once.
@Suite struct SimulationTests {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    @Test func devicesConvergeUnderFaultsForEverySeed() async throws {
        try await runSeeds(grdb: false, count: Self.environment["FERRY_SIM_SEEDS"].flatMap(UInt64.init) ?? 100)
    }

    /// The same on examples/todo: lists for sets, todos for terms, notes for folders,
    /// list members for collaborators (it has no folder links). `FERRY_SIM_TODO_SEEDS`.
    @Test func todoDevicesConvergeUnderFaultsForEverySeed() async throws {
        try await runSeeds(.todo, grdb: false, count: Self.environment["FERRY_SIM_TODO_SEEDS"].flatMap(UInt64.init) ?? 100)
    }

    /// The same, with every device writing as an app that only uses GRDB
    /// (records and SQL on `store.database`): the triggers must record each
    /// write as the store's calls do. `FERRY_SIM_GRDB_SEEDS` (default 100).
    @Test func devicesWritingThroughGRDBConvergeUnderFaults() async throws {
        try await runSeeds(grdb: true, count: Self.environment["FERRY_SIM_GRDB_SEEDS"].flatMap(UInt64.init) ?? 100)
    }

    /// The same, with every device in continuous mode (`engine.start()`, issue
    /// 34): uploads, long polls and retries run by themselves between the
    /// operations, under the same faults plus long polls cut mid-wait, the
    /// server restarted while devices wait, and its LISTEN connection killed;
    /// quiescence calls no `sync()`. `FERRY_SIM_LIVE_SEEDS` (default 100).
    @Test func devicesInContinuousModeConvergeUnderFaults() async throws {
        try await runSeeds(grdb: false, live: true, count: Self.environment["FERRY_SIM_LIVE_SEEDS"].flatMap(UInt64.init) ?? 100)
    }

    /// The same on study sets that may be public (issue 46,
    /// ``SimulationSchema/studyPublic``): owners make sets public and private
    /// again; devices subscribe to sets (public or not, theirs or not) and
    /// unsubscribe, with TTLs the seed's clock passes. Each device ends with
    /// exactly its default stream and the readable rows of the sets it still
    /// subscribes to or dropped within the TTL. `FERRY_SIM_SUBSCRIPTION_SEEDS`.
    @Test func devicesSubscribingToPublicSetsConvergeUnderFaults() async throws {
        try await runSeeds(
            .studyPublic, grdb: false, count: Self.environment["FERRY_SIM_SUBSCRIPTION_SEEDS"].flatMap(UInt64.init) ?? 100)
    }

    /// The two above at once: devices in continuous mode subscribe and unsubscribe
    /// at random (public sets, their own, others' private ones, ids that never
    /// existed; TTLs, priorities) under continuous mode's faults (waits cut, the
    /// server restarted while devices wait, its LISTEN connection killed), so
    /// that `POST /v1/changes/wait` meets them. A seed in three runs against the
    /// server as configured (`live.max_wait_streams` 100), the others against a
    /// second `ferry serve` on the same database that takes 1 or 2 streams a
    /// wait, so that devices split their waits. Each device converges by
    /// quiescence alone (no `sync()`) to its default stream plus its subscribed,
    /// readable rows, and no wait of it is answered 400.
    /// `FERRY_SIM_LIVE_SUBSCRIPTION_SEEDS` (default 100).
    @Test func devicesInContinuousModeSubscribingConvergeUnderFaults() async throws {
        try await runSeeds(
            .studyPublic, grdb: false, live: true,
            count: Self.environment["FERRY_SIM_LIVE_SUBSCRIPTION_SEEDS"].flatMap(UInt64.init) ?? 100)
    }

    func runSeeds(_ chosen: SimulationSchema = .study, grdb: Bool, live: Bool = false, count: UInt64) async throws {
        let env = Self.environment
        let seeds: [UInt64]
        if let one = env["FERRY_SIM_SEED"].flatMap(UInt64.init) {
            seeds = [one]
        } else {
            let first = env["FERRY_SIM_FIRST"].flatMap(UInt64.init) ?? 1
            seeds = Array(first..<(first + count))
        }
        guard !seeds.isEmpty else { return }
        let steps = env["FERRY_SIM_STEPS"].flatMap(Int.init) ?? 30
        let faultRate = env["FERRY_SIM_FAULTS"].flatMap(Double.init) ?? 0.2
        let (database, schema) = try chosen.database()
        let server = try FerryServer(database: database)
        defer { server.stop() }
        // Continuous mode with subscriptions: servers beside it that take 1 and 2 streams a wait.
        let capped =
            live && chosen.publicFlag != nil
            ? try [1, 2].map { try FerryServer(beside: server, settings: ["FERRY_LIVE_MAX_WAIT_STREAMS": String($0)]) } : []
        defer { for other in capped { other.stop() } }
        var cappedSeeds = 0
        var total = SimulationReport(seed: 0)
        var failed: [UInt64] = []
        let started = Date()
        let restarts = env["FERRY_SIM_RESTARTS"] != "0"
        let sampler = env["FERRY_SOAK_SAMPLES"].map { path in
            SoakSampler(path: path, serverPID: { [server] in server.pid })
        }
        // swift test holds a test's output until the run ends: a long run
        // writes each failure here as it happens.
        let failureFile = env["FERRY_SIM_FAILURES"].map(FailureFile.init)
        var done = 0
        sampler?.sample(seeds: 0, failures: 0)
        for seed in seeds {
            sampler?.tick(seeds: done, failures: failed.count)
            done += 1
            var picker = SplitMix64(seed: seed ^ 0xD1CE)
            let devices = env["FERRY_SIM_DEVICES"].flatMap(Int.init) ?? 2 + Int(picker.next() % 3)
            // Seed 3k on the server as configured, 3k+1 and 3k+2 on one capped at 1 and 2 streams a wait.
            let cap = capped.isEmpty || seed % 3 == 0 ? nil : Int(seed % 3)
            if cap != nil { cappedSeeds += 1 }
            let report: SimulationReport
            do {
                report = try await Simulation(
                    server: cap.map { capped[$0 - 1] } ?? server, schema: schema, seed: seed, faultRate: faultRate, restarts: restarts,
                    grdb: grdb, live: live
                )
                .run(deviceCount: devices, steps: steps)
            } catch {
                // A seed that could not be set up or checked is a failure of that
                // seed, told like the others; the run goes on.
                var broken = SimulationReport(seed: seed)
                broken.failures = ["error: \(error)"]
                report = broken
            }
            total.operations += report.operations
            total.crashes += report.crashes
            total.serverRestarts += report.serverRestarts
            for (fault, count) in report.faults { total.faults[fault, default: 0] += count }
            total.rekeyed += report.rekeyed
            total.revocationRaces += report.revocationRaces
            total.longPolls += report.longPolls
            total.splitWaits += report.splitWaits
            total.listenerKills += report.listenerKills
            total.subscribes += report.subscribes
            total.unsubscribes += report.unsubscribes
            total.evictions += report.evictions
            total.hoursPassed += report.hoursPassed
            total.slowTransactions += report.slowTransactions
            total.lateWrites += report.lateWrites
            if !report.failures.isEmpty {
                failed.append(seed)
                let test =
                    live
                    ? schema.publicFlag != nil
                        ? "devicesInContinuousModeSubscribingConvergeUnderFaults" : "devicesInContinuousModeConvergeUnderFaults"
                    : schema.publicFlag != nil
                        ? "devicesSubscribingToPublicSetsConvergeUnderFaults"
                        : schema.app == .todo
                            ? "todoDevicesConvergeUnderFaultsForEverySeed"
                            : grdb ? "devicesWritingThroughGRDBConvergeUnderFaults" : "devicesConvergeUnderFaultsForEverySeed"
                let text = """
                    seed \(seed) failed (\(schema.app.rawValue)\(schema.publicFlag == nil ? "" : ", subscriptions"), \(devices) devices, \(steps) steps\(grdb ? ", writing through GRDB" : "")\(live ? ", live" : "")\(cap.map { ", wait cap \($0)" } ?? "")); replay: \
                    FERRY_SIM_SEED=\(seed) FERRY_SIM_DEVICES=\(devices) FERRY_SIM_STEPS=\(steps) swift test --filter \
                    SimulationTests/\(test)
                    \(report.failures.joined(separator: "\n"))
                    what each side knew:
                    \(report.diagnosis.joined(separator: "\n"))
                    operations:
                    \(report.log.joined(separator: "\n"))
                    """
                Issue.record(Comment(rawValue: text))
                failureFile?.append(text + "\n\n")
            }
        }
        sampler?.sample(seeds: done, failures: failed.count)
        let faults = SimulationFault.allCases.map { "\($0.rawValue) \(total.faults[$0] ?? 0)" }.joined(separator: ", ")
        let liveCounts =
            live
            ? "\(total.longPolls) long polls, \(total.listenerKills) LISTEN connections killed, "
                + (capped.isEmpty ? "" : "\(total.splitWaits) waits split (\(cappedSeeds) seeds capped at 1 or 2 streams a wait), ")
            : ""
        let subscriptionCounts =
            schema.publicFlag == nil
            ? ""
            : "\(total.subscribes) subscribes, \(total.unsubscribes) unsubscribes, \(total.evictions) evictions, "
                + "\(total.hoursPassed) hours passed, "
        print(
            "simulation (\(schema.app.rawValue)\(schema.publicFlag == nil ? "" : ", subscriptions")\(grdb ? ", GRDB writes" : "")"
                + "\(live ? ", continuous mode" : "")): \(seeds.count) seeds, "
                + "\(total.operations) operations, \(total.crashes) crashes, \(total.serverRestarts) server restarts, \(liveCounts)"
                + "\(subscriptionCounts)faults: \(faults); "
                + "\(total.rekeyed) lost writes re-sent under a new key; \(total.revocationRaces) updates revoked before their answer; "
                + "\(total.slowTransactions) jobs' transactions held open, \(total.lateWrites) of them writing a synced row late; "
                + "\(failed.count) failed \(failed); "
                + String(format: "%.1f s", Date().timeIntervalSince(started)))
    }

    /// The long form: 8 devices, 200 rounds (each round one operation per
    /// device), under `FERRY_SIM_LONG=1` (bench/soak runs it).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["FERRY_SIM_LONG"] != nil))
    func eightDevicesForTwoHundredRounds() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let seed = Self.environment["FERRY_SIM_SEED"].flatMap(UInt64.init) ?? 8_200
        let report = try await Simulation(server: server, seed: seed, faultRate: 0.1, restarts: true).run(deviceCount: 8, steps: 1_600)
        let faults = SimulationFault.allCases.map { "\($0.rawValue) \(report.faults[$0] ?? 0)" }.joined(separator: ", ")
        print(
            "simulation long: seed \(seed), 8 devices, \(report.operations) operations, \(report.crashes) crashes, "
                + "\(report.serverRestarts) server restarts, faults: \(faults); \(report.failures.count) failures")
        #expect(report.failures.isEmpty, Comment(rawValue: report.failures.joined(separator: "\n")))
    }
}

/// A file that failure reports are appended to, each as soon as it is known.
struct FailureFile {
    let path: String
    /// The simulations run side by side: one report is appended at a time, whole.
    private static let appending = Mutex(())

    func append(_ text: String) {
        Self.appending.withLock { _ in write(text) }
    }

    private func write(_ text: String) {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(text.utf8))
    }
}
