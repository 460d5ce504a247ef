import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import FerryMemcached

@Suite struct ConcurrencyTests {
    /// Many threads share one client with fewer pooled connections than threads; every
    /// read sees exactly what its own thread wrote.
    @Test func manyThreadsHammerOneClient() throws {
        let a = try MemcachedProcess()
        let b = try MemcachedProcess()
        let client = try MemcachedClient(
            configuration: .init(
                servers: [a.address, b.address], pollTimeoutMs: 1000, poolSize: 4))
        let threads = 16
        let rounds = 150
        let problems = Mutex<[String]>([])
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            let worker = Thread {
                defer { done.leave() }
                do {
                    for round in 0..<rounds {
                        let key = "t\(thread):r\(round % 10)"
                        let value = Array("\(thread)-\(round)".utf8)
                        try client.set(key, value, ttlSeconds: 60)
                        let read = try client.get(key)
                        if read != value { problems.withLock { $0.append("\(key): got \(String(describing: read))") } }
                        if round % 25 == 0 {
                            let many = try client.getMany((0..<10).map { "t\(thread):r\($0)" })
                            if many[key] != value { problems.withLock { $0.append("getMany \(key)") } }
                        }
                        if round % 30 == 0 { _ = try client.delete(key) }
                    }
                } catch {
                    problems.withLock { $0.append("thread \(thread): \(error)") }
                }
            }
            worker.start()
        }
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(problems.withLock { $0 } == [])
    }

    /// With every pooled connection busy, a caller gives up after about the poll
    /// timeout instead of queueing forever.
    @Test func exhaustedPoolFailsFast() throws {
        let listener = try SilentListener()
        let client = try MemcachedClient(
            configuration: .init(
                servers: [listener.address], pollTimeoutMs: 300, poolSize: 1))
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            started.signal()
            _ = try? client.get("slow")  // holds the only connection for ~300 ms
            finished.signal()
        }.start()
        started.wait()
        // A real sleep: nothing outside the client shows that the thread has taken the only
        // connection (the listener never accepts); 50 ms of its 300 ms hold lets it.
        usleep(50_000)
        let (result, seconds) = timed { try client.get("other") }
        #expect(kind(of: result) == .unavailable)
        #expect(seconds < 1)
        #expect(finished.wait(timeout: .now() + 2) == .success)
    }
}
