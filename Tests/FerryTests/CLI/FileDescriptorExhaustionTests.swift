import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 21, faults: file descriptors exhausted. `ferry serve` runs under
/// `ulimit -n 64` and is flooded with connections. It must refuse the ones it
/// cannot take by closing them at once (never leave them hanging), keep
/// serving the connections it has, log the exhaustion at most once a second,
/// and accept again once descriptors free up.
/// `FERRY_FAULT_SECONDS` (default 3) is how long new connections keep coming.
@Suite struct FileDescriptorExhaustionTests {
    @Test func refusesCleanlyKeepsServingLogsRarelyAndRecovers() throws {
        let seconds = Double(ProcessInfo.processInfo.environment["FERRY_FAULT_SECONDS"] ?? "") ?? 3
        let database = try ScratchDatabase()
        defer { database.drop() }
        let owner = try database.connect()
        let token = try TestServerless.token(owner, user: "fd_user")
        owner.close()
        let ferry = try FerryServeProcess(
            databaseURL: database.appURL, settings: ["FERRY_DATABASE_POOL_SIZE": "2", "FERRY_LISTEN_WORKER_THREADS": "2"],
            descriptorLimit: 64)
        let auth = [("Authorization", "Bearer \(token)")]
        let first = TestHTTPClient(port: ferry.port, timeout: 5)
        #expect(try first.request("GET", "/v1/auth/me", headers: auth).status == 200)

        // Far more connections than the limit allows, all held open.
        var flood: [TestHTTPClient] = []
        for _ in 0..<120 {
            let client = TestHTTPClient(port: ferry.port, timeout: 5)
            try? client.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            flood.append(client)
        }
        var answered = 0, refused = 0, hung: [String] = []
        func settle(_ client: TestHTTPClient) {
            do {
                let response = try client.readResponse()
                if response.status == 200 { answered += 1 } else { hung.append("status \(response.status)") }
            } catch {
                if "\(error)".hasPrefix("timed out") { hung.append("\(error)") } else { refused += 1 }
            }
        }
        // More keep coming while it is exhausted; the old connection is served all along.
        let exhaustedUntil = Date().addingTimeInterval(seconds)
        var kept = 0, attempts = 0
        while Date() < exhaustedUntil {
            let late = TestHTTPClient(port: ferry.port, timeout: 5)
            try? late.send(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            settle(late)
            attempts += 1
            let me = try first.request("GET", "/v1/auth/me", headers: auth)
            #expect(me.status == 200, "the existing connection: \(me.status) \(me.text.prefix(200))")
            kept += 1
            // A real sleep: it paces the late connections over the exhaustion, which lasts a set time.
            usleep(20_000)
        }
        #expect(ferry.isRunning)
        for client in flood { settle(client) }
        #expect(answered > 0 && refused > 0, "answered \(answered), refused \(refused)")
        #expect(hung.isEmpty, "\(hung.count) connections neither answered nor closed: \(hung.prefix(3))")

        for client in flood { client.close() }
        flood.removeAll()
        #expect(eventually(within: 10, every: 0.1) { FerryServeProcess.healthy(port: ferry.port) }, "new connections are not accepted again")

        // The log is buffered: stop the process (SIGTERM flushes it) before reading it.
        ferry.stop()
        let lines = ferry.logLines().filter { $0.contains(#""level":"#) }
        let exhaustion = lines.filter { $0.contains("file descriptors") }
        #expect(!exhaustion.isEmpty, "the exhaustion was never logged:\n\(ferry.logTail())")
        // Any two lines at least a second apart: a sliding window, not calendar seconds.
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = lines.compactMap { parser.date(from: String($0.dropFirst(#"{"ts":""#.count).prefix(24))) }.sorted()
        #expect(times.count == lines.count, "unreadable timestamps:\n\(ferry.logTail())")
        let gaps = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect(gaps.allSatisfy { $0 >= 1 }, "two log lines less than a second apart: \(gaps)\n\(ferry.logTail())")
        print(
            "fault fd-exhaustion: ulimit -n 64, 120 held + \(attempts) new connections over \(Int(seconds)) s: \(answered) answered, \(refused) closed at once, \(hung.count) hung; old connection served \(kept) of \(kept) times; \(lines.count) log lines (\(exhaustion.count) on descriptors), the closest \(gaps.min().map { String(format: "%.1f s", $0) } ?? "-") apart; accepting again after the flood"
        )
    }
}
