import Dispatch
import FerryHTTPTestSupport
import Foundation
import Synchronization
import Testing
import FerryPostgres
import FerryTestSupport

/// Ferry survives a PostgreSQL restart without being restarted itself:
/// reads and keyed writes during the outage get 503 with Retry-After (never a
/// 500, a hang or a crash), and both are served again within 10 s (issue 21's
/// fault "a PostgreSQL restart under load").
@Suite struct PostgresRestartTests {
    @Test func servesAgainWithinSecondsOfARestart() throws {
        let isolated = try PrivateClusterServer { $0.database.acquireTimeoutMs = 500 }
        defer { isolated.stop() }
        let (cluster, server) = (isolated.cluster, isolated.server)
        let user = try server.user("rita")

        struct Outcome { let at: Double; let status: Int; let retryAfter: Bool; let seconds: Double; let write: Bool; let text: String }
        let outcomes = Mutex<[Outcome]>([])
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        // A wait that fails must not leave the clients running.
        defer { stop.store(true, ordering: .relaxed); group.wait() }
        let start = Date()
        let port = server.port
        // Six clients: four read, two write (each create under its own Idempotency-Key).
        for index in 0..<6 {
            DispatchQueue.global().async(group: group) {
                let client = TestHTTPClient(port: port, timeout: 10)
                let write = index >= 4
                var n = 0
                while !stop.load(ordering: .relaxed) {
                    let began = Date()
                    n += 1
                    let response =
                        write
                        ? try? client.request(
                            "POST", "/v1/study_sets",
                            headers: [("Authorization", "Bearer \(user.token)"), ("Idempotency-Key", "w\(index)-\(n)")],
                            json: ["title": "restart \(index)-\(n)"])
                        : try? client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(user.token)")])
                    let outcome = Outcome(
                        at: began.timeIntervalSince(start), status: response?.status ?? -1,
                        retryAfter: response?.header("Retry-After") != nil, seconds: Date().timeIntervalSince(began), write: write,
                        text: response.map { [200, 201, 503].contains($0.status) ? "" : String($0.text.prefix(300)) } ?? "no answer")
                    outcomes.withLock { $0.append(outcome) }
                    if response == nil { client.close() }
                    // A real sleep: it paces a client, as load; it waits for nothing.
                    usleep(5_000)
                }
            }
        }
        func served(after instant: Double, write: Bool) -> Bool {
            outcomes.withLock { $0.contains { $0.at > instant && $0.write == write && (200..<300).contains($0.status) } }
        }
        // Serving first, with time for it when the whole suite loads the machine.
        try waitUntil("reads and writes to be served", within: 15) { served(after: 0, write: false) && served(after: 0, write: true) }
        try cluster.stop()
        let outageStart = Date().timeIntervalSince(start)
        // A real sleep: the outage's length is the fault under test (2 s of refusals and
        // reconnects, longer than the pool's acquire timeout); the 503s are checked below.
        Thread.sleep(forTimeInterval: 2)
        try cluster.start()
        let restarted = Date().timeIntervalSince(start)
        // Back within 10 s (the issue's bound).
        try waitUntil("reads and writes to be served within 10 s of the restart", within: 10) {
            served(after: restarted, write: false) && served(after: restarted, write: true)
        }
        let recovered = Date().timeIntervalSince(start)
        // Then a second of steady service, checked below, from 2 s after the restart at the earliest.
        let steady = max(recovered, restarted + 2)
        // A real sleep: the second of steady service is itself what the test checks.
        Thread.sleep(forTimeInterval: max(0, steady + 1 - Date().timeIntervalSince(start)))
        stop.store(true, ordering: .relaxed)
        group.wait()

        let all = outcomes.withLock { $0 }
        let statuses = Set(all.map(\.status))
        #expect(statuses.isSubset(of: [200, 201, 503]), "\(statuses): \(Set(all.map(\.text)).filter { !$0.isEmpty }.prefix(3))")
        let without = all.filter { $0.status == 503 && !$0.retryAfter }
        #expect(without.isEmpty, "503 without Retry-After")
        #expect(all.allSatisfy { $0.seconds < 5 }, "a request hung for \(all.map(\.seconds).max() ?? 0) s")
        #expect(all.contains { $0.at < outageStart && $0.status == 200 })
        for write in [false, true] {
            #expect(
                all.contains { $0.write == write && $0.at > outageStart + 0.2 && $0.at < restarted && $0.status == 503 },
                "no 503 during the outage (write: \(write))")
            let first = all.filter { $0.write == write && $0.at > restarted && (200..<300).contains($0.status) }.map(\.at).min()
            #expect(first.map { $0 - restarted < 10 } == true, "no 2xx within 10 s of the restart (write: \(write))")
        }
        let late = all.filter { $0.at > steady }
        #expect(!late.isEmpty && late.allSatisfy { (200..<300).contains($0.status) }, "not serving once recovered: \(Set(late.map(\.status)))")
        let outage = all.filter { $0.at > outageStart && $0.at < restarted }
        print(
            "fault postgres-restart: \(all.count) requests; outage \(String(format: "%.1f", restarted - outageStart)) s: \(outage.filter { $0.status == 503 }.count) of \(outage.count) answered 503 with Retry-After; slowest \(String(format: "%.2f", all.map(\.seconds).max() ?? 0)) s; reads and writes back \(String(format: "%.2f", recovered - restarted)) s after the restart"
        )
    }
}
