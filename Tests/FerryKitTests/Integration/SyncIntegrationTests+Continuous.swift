@testable import FerryKit
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Continuous mode (`engine.start()`) against a real `ferry serve`: nothing
/// in these tests calls `sync()` unless it says so.
extension SyncIntegrationTests {
    @Test func aWriteOnOneDeviceReachesAnotherInContinuousModeWithNothingCallingSync() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        await a.engine.start()
        await b.engine.start()
        // b fills its store by itself, then holds a long poll.
        try await waitUntilAsync("b's long poll", within: 60) { await b.engine.currentStatus.connected }
        #expect(await b.engine.currentStatus.mode == .continuous)
        let written = ContinuousClock.now
        let id = try a.store.create("study_sets", ["title": .string("live")])
        try await waitUntilAsync("the set on b", within: 60, every: 0.005) { try b.store.row("study_sets", id: id) != nil }
        let took = ContinuousClock.now - written
        #expect(try b.store.row("study_sets", id: id)?["title"] == .string("live"))
        try await waitUntilAsync("a's outbox empty", within: 30) { try a.store.pendingCount() == 0 }
        #expect(a.transport.delivered.contains { $0.method == "POST" && $0.path.hasPrefix("/v1/study_sets") })
        #expect(b.transport.delivered.contains { $0.path.contains("wait=") }, "b never long-polled")
        #expect(!b.transport.delivered.contains { $0.method != "GET" }, "b uploaded though it wrote nothing")
        await a.engine.stop()
        await b.engine.stop()
        print("ferrykit: continuous mode: a write on a reached b in \(took) (upload delay 0.25 s included)")
    }

    @Test func writesMadeWithinTheUploadDelayGoUpTogether() async throws {
        let (server, _, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        // Two seconds: ten local writes take milliseconds, even on a loaded machine.
        await a.engine.start(uploadDelay: 2)
        try await waitUntilAsync("a's long poll", within: 60) { await a.engine.currentStatus.connected }
        let before = a.transport.delivered.count
        // Ten separate transactions, through the store and with GRDB.
        for index in 0..<5 { _ = try a.store.create("study_sets", ["title": .string("s\(index)")]) }
        for index in 5..<10 {
            try await a.store.database.write { db in
                try db.execute(sql: "INSERT INTO study_sets (id, title) VALUES (?, ?)", arguments: [UUID().uuidString.lowercased(), "s\(index)"])
            }
        }
        try await waitUntilAsync("the outbox empty", within: 60) { try a.store.pendingCount() == 0 }
        await a.engine.stop()
        let writes = a.transport.delivered[before...].filter { $0.method != "GET" }
        #expect(writes.count == 1, "\(writes.map { "\($0.method) \($0.path)" })")
        #expect(try a.store.rows("study_sets").count == 10)
    }

    @Test func stopEndsTheWaitAtOnceAndNothingRunsAfterIt() async throws {
        let (server, _, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        await a.engine.start(longPollWait: 25)
        try await waitUntilAsync("a's long poll", within: 60) { await a.engine.currentStatus.connected }
        let started = ContinuousClock.now
        await a.engine.stop()
        // Not timing a speed: a stop that waited out the 25 s poll would fail this.
        #expect(ContinuousClock.now - started < .seconds(20))
        let status = await a.engine.currentStatus
        #expect(status.mode == .manual)
        #expect(!status.connected)
        let after = a.transport.delivered.count
        _ = try a.store.create("study_sets", ["title": .string("after stop")])
        // Nothing uploads it: waited for four times the upload delay, which a running loop would have used.
        try await Task.sleep(for: .seconds(1))
        #expect(a.transport.delivered.count == after)
        #expect(try a.store.pendingCount() == 1)
        // sync() works alone again, and start() resumes.
        try await a.engine.sync()
        #expect(try a.store.pendingCount() == 0)
        await a.engine.start()
        _ = try a.store.create("study_sets", ["title": .string("after start")])
        try await waitUntilAsync("the outbox empty", within: 60) { try a.store.pendingCount() == 0 }
        await a.engine.stop()
    }

    /// A user's store and engine with its own retry table (jitter fixed at one
    /// half), through a faulty link whose every request is timed.
    static func device(_ server: FerryServer, policy: RetryPolicy) async throws -> (FerryStore, FaultyTransport, TimedTransport, SyncEngine) {
        let alice = try await server.user("alice")
        let store = try FerryStore(path: ":memory:")
        let faulty = FaultyTransport(URLSessionTransport(baseURL: server.baseURL))
        let timed = TimedTransport(faulty)
        let engine = SyncEngine(store: store, transport: timed, tokens: FixedToken(alice.token), policy: policy, random: { 0.5 })
        return (store, faulty, timed, engine)
    }

    @Test func aServerErrorBacksOffByTheRetryTableThenUploads() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        // base 1 s: the first wait is 0.5 s, the second 1 s.
        let (store, faulty, timed, engine) = try await Self.device(server, policy: RetryPolicy(base: 1, cap: 8))
        await engine.start(uploadDelay: 0.05)
        try await waitUntilAsync("the long poll", within: 60) { await engine.currentStatus.connected }
        let failure = TransportResponse(
            status: 500, headers: ["Content-Type": "application/problem+json"],
            body: Data(#"{"code":"internal","status":500}"#.utf8))
        faulty.inject(.answer(failure)) { $0.method == "POST" }
        faulty.inject(.answer(failure)) { $0.method == "POST" }
        let id = try store.create("study_sets", ["title": .string("after two 500s")])
        try await waitUntilAsync("the upload", within: 60) { try store.pendingCount() == 0 }
        let posts = timed.sent.filter { $0.request.method == "POST" }.map(\.at)
        #expect(posts.count == 3)
        if posts.count == 3 {
            #expect(posts[1].timeIntervalSince(posts[0]) >= 0.45, "the first backoff was \(posts[1].timeIntervalSince(posts[0])) s")
            #expect(posts[2].timeIntervalSince(posts[1]) >= 0.95, "the second backoff was \(posts[2].timeIntervalSince(posts[1])) s")
        }
        try await waitUntilAsync("the long poll again", within: 60) { await engine.currentStatus.connected }
        let status = await engine.currentStatus
        #expect(status.lastError == nil && status.nextAttempt == nil && status.online)
        #expect(try store.row("study_sets", id: id)?["revision"] != nil)
        await engine.stop()
    }

    @Test func networkBecameAvailableEndsTheBackoffAtOnce() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        // A 300 s backoff after the first failure: far longer than the test waits.
        let (store, faulty, _, engine) = try await Self.device(server, policy: RetryPolicy(base: 1_200, cap: 600))
        faulty.setOffline(true)
        await engine.start()
        try await waitUntilAsync("the failed first round", within: 60) { await engine.currentStatus.nextAttempt != nil }
        let due = try #require(await engine.currentStatus.nextAttempt)
        #expect(due.timeIntervalSinceNow > 200)
        faulty.setOffline(false)
        engine.networkBecameAvailable()
        // Generous for a loaded machine, and still far short of the backoff.
        try await waitUntilAsync("the long poll", within: 120) { await engine.currentStatus.connected }
        #expect(try store.schema() != nil)
        #expect(await engine.currentStatus.nextAttempt == nil)
        await engine.stop()
    }

    @Test func syncInContinuousModeIsARoundOfTheLoop() async throws {
        let (server, _, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        await a.engine.start(uploadDelay: 30)
        try await waitUntilAsync("a's long poll", within: 60) { await a.engine.currentStatus.connected }
        _ = try a.store.create("study_sets", ["title": .string("now")])
        // The upload delay is 30 s; sync() asks for the round at once and returns with it.
        try await a.engine.sync()
        #expect(try a.store.pendingCount() == 0)
        await a.engine.stop()
    }
}

/// A transport that notes when each request was sent, for the backoff's timing.
final class TimedTransport: Transport {
    let inner: any Transport
    private let log = Mutex<[(at: Date, request: TransportRequest)]>([])

    init(_ inner: any Transport) { self.inner = inner }

    var sent: [(at: Date, request: TransportRequest)] { log.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        log.withLock { $0.append((Date(), request)) }
        return try await inner.send(request)
    }
}
