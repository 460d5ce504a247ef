import Dispatch
import Foundation
import Synchronization
import Testing
import FerryPostgres
import FerryTestSupport

/// Ferry survives a PostgreSQL restart without being restarted itself:
/// requests during the outage get 503 with Retry-After (never a hang or a
/// crash), and full service returns within seconds.
@Suite struct PostgresRestartTests {
    @Test func servesAgainWithinSecondsOfARestart() throws {
        let cluster = try TemporaryPostgres()
        defer { cluster.destroy() }
        let superuser = try PostgresConnection(url: cluster.url)
        try superuser.execute("CREATE ROLE ferry_owner LOGIN CREATEDB; CREATE ROLE ferry_app LOGIN NOBYPASSRLS")
        superuser.close()
        let base = "postgresql://%@@127.0.0.1:\(cluster.port)/postgres"
        let database = try ScratchDatabase(
            ownerBaseURL: String(format: base, "ferry_owner"), appBaseURL: String(format: base, "ferry_app"))
        let server = try TestServer(database: database) {
            $0.database.poolSize = 4
            $0.database.acquireTimeoutMs = 500
        }
        defer { server.stop() }
        let user = try server.user("rita")

        struct Outcome { let at: Double; let status: Int; let retryAfter: Bool; let seconds: Double }
        let outcomes = Mutex<[Outcome]>([])
        let stop = Atomic<Bool>(false)
        let start = Date()
        let group = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                let client = TestHTTPClient(port: server.port, timeout: 10)
                while !stop.load(ordering: .relaxed) {
                    let began = Date()
                    let response = try? client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(user.token)")])
                    let outcome = Outcome(
                        at: began.timeIntervalSince(start), status: response?.status ?? -1,
                        retryAfter: response?.header("Retry-After") != nil, seconds: Date().timeIntervalSince(began))
                    outcomes.withLock { $0.append(outcome) }
                    if response == nil { client.close() }
                    usleep(5_000)
                }
            }
        }
        // Serving first: a fixed sleep was too short when the whole suite loads the machine.
        let serving = Date().addingTimeInterval(15)
        while !outcomes.withLock({ $0.contains { $0.status == 200 } }), Date() < serving { usleep(20_000) }
        usleep(200_000)
        try cluster.stop()
        let outageStart = Date().timeIntervalSince(start)
        usleep(2_000_000)
        try cluster.start()
        let restarted = Date().timeIntervalSince(start)
        usleep(4_000_000)
        stop.store(true, ordering: .relaxed)
        group.wait()

        let all = outcomes.withLock { $0 }
        #expect(all.allSatisfy { $0.status == 200 || $0.status == 503 }, "\(Set(all.map(\.status)))")
        let without = all.filter { $0.status == 503 && !$0.retryAfter }
        #expect(without.isEmpty, "503 without Retry-After")
        #expect(all.allSatisfy { $0.seconds < 3 }, "a request hung for \(all.map(\.seconds).max() ?? 0) s")
        #expect(all.contains { $0.at < outageStart && $0.status == 200 })
        #expect(all.contains { $0.at > outageStart + 0.2 && $0.at < restarted && $0.status == 503 })
        let late = all.filter { $0.at > restarted + 2 }
        #expect(!late.isEmpty && late.allSatisfy { $0.status == 200 }, "not serving 2 s after the restart")
    }
}
