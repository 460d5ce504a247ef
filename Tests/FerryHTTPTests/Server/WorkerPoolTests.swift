import Dispatch
import FerryBase
@testable import FerryHTTP
import Testing

/// The worker pool serves urgent jobs (a request whose credentials were
/// verified already) before the others queued, but never more than
/// `urgentInARow` in a row while others wait (issue 51: a flood of requests
/// refused anyway must not queue in front of signed-in ones, and urgent
/// load must not starve the rest).
@Suite struct WorkerPoolTests {
    /// One worker, held busy until `release` is signalled, with `jobs` queued
    /// behind it; the order in which they ran.
    static func order(_ jobs: [(name: String, urgent: Bool)]) -> [String] {
        let pool = WorkerPool(threads: 1, name: "test-pool")
        defer { pool.stop() }
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        pool.submit {
            started.signal()
            release.wait()
        }
        started.wait()
        // The one worker is held: everything below waits in the queues.
        let ran = Locked([String]())
        let done = DispatchGroup()
        for job in jobs {
            done.enter()
            pool.submit(urgent: job.urgent) {
                ran.withLock { $0.append(job.name) }
                done.leave()
            }
        }
        release.signal()
        done.wait()
        return ran.withLock { $0 }
    }

    @Test func urgentJobsGoFirstInTheirOwnOrder() {
        let jobs = [("n1", false), ("n2", false), ("u1", true), ("n3", false), ("u2", true)]
        #expect(Self.order(jobs) == ["u1", "u2", "n1", "n2", "n3"])
    }

    @Test func urgentJobsNeverStarveTheOthers() {
        let burst = WorkerPool.urgentInARow
        let jobs = [("n1", false), ("n2", false)] + (0..<(2 * burst + 1)).map { ("u\($0)", true) }
        let ran = Self.order(jobs)
        #expect(ran.count == jobs.count)
        // At most `urgentInARow` urgent jobs, then a waiting normal one.
        #expect(ran.firstIndex(of: "n1") == burst, "\(ran)")
        #expect(ran.firstIndex(of: "n2") == 2 * burst + 1, "\(ran)")
        #expect(ran.filter { $0.hasPrefix("u") } == (0..<(2 * burst + 1)).map { "u\($0)" })
    }

    @Test func withoutUrgentJobsTheOrderIsArrival() {
        let jobs = (0..<20).map { ("n\($0)", false) }
        #expect(Self.order(jobs) == jobs.map(\.0))
    }
}
