import Dispatch
import Foundation
import Synchronization
import Testing
import FerryTestSupport

/// The serve pool under HTTP load: more concurrent requests than connections
/// all complete, and an exhausted pool answers 503 with Retry-After, never hangs.
@Suite struct PoolOverHTTPTests {
    @Test func sixtyFourConcurrentRequestsOnAPoolOfFour() throws {
        let server = try TestServer {
            $0.database.poolSize = 4; $0.listen.workerThreads = 64
        }
        defer { server.stop() }
        let user = try server.user("pat")
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            let client = server.client()
            var mine: [Int] = []
            for _ in 0..<5 {
                let status = (try? client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(user.token)")]))?.status ?? -1
                mine.append(status)
            }
            statuses.withLock { $0 += mine }
        }
        let all = statuses.withLock { $0 }
        #expect(all.count == 320)
        #expect(all.allSatisfy { $0 == 200 }, "\(Dictionary(grouping: all, by: { $0 }).mapValues(\.count))")
    }

    @Test func exhaustedPoolAnswers503WithRetryAfter() throws {
        let server = try TestServer {
            $0.database.poolSize = 1
            $0.database.acquireTimeoutMs = 200
            $0.listen.workerThreads = 8
        }
        defer { server.stop() }
        let user = try server.user("quinn")
        // Hold the only connection: a request whose statement sleeps, sent on its own thread.
        let holder = DispatchQueue(label: "holder")
        let held = DispatchSemaphore(value: 0)
        holder.async {
            _ = try? server.app.pool.withConnection { connection in
                held.signal()
                _ = try connection.query("SELECT pg_sleep(1.5)")
            }
        }
        held.wait()
        let started = Date()
        let response = try server.client().request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(user.token)")])
        #expect(response.status == 503)
        #expect(response.object["code"] as? String == "unavailable")
        #expect(Int(response.header("Retry-After") ?? "") != nil)
        #expect(Date().timeIntervalSince(started) < 1.2, "waited for the pool instead of timing out")
    }
}
