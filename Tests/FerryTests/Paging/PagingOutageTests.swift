import Dispatch
import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// memcached failures, with memcached processes of the tests' own.
@Suite(.serialized) struct PagingOutageTests {
    /// A server on `memcached`, fast to notice failures, with a set of 250 terms and
    /// one of 5.
    struct Setup {
        let server: TestServer
        let alice: Pager
        let big: String
        let small: String

        init(memcached: [String], logger: Logger? = nil) throws {
            server = try TestServer(logger: logger) {
                $0.memcached.servers = memcached
                $0.memcached.retryTimeoutSeconds = 1
            }
            alice = try Pager(server: server, name: "alice")
            big = try alice.createSet()
            small = try alice.createSet()
            try PagingSeed.terms(server, set: big, count: 250)
            try PagingSeed.terms(server, set: small, count: 5)
        }

        func firstPage() throws -> TestHTTPClient.Response { try alice.call("GET", "/v1/terms?set_id=\(big)&limit=100") }

        func page(_ token: String, _ page: Int) throws -> TestHTTPClient.Response {
            try alice.call("GET", "/v1/terms?set_id=\(big)&limit=100&paging_token=\(token)&page=\(page)")
        }

        /// Retries `attempt` for up to `seconds` until it answers `status`.
        func eventually(
            _ status: Int, within seconds: Double = 6, _ attempt: () throws -> TestHTTPClient.Response
        ) throws -> TestHTTPClient.Response {
            var last = try attempt()
            _ = try FerryHTTPTestSupport.eventually(within: seconds, every: 0.1) {
                last = try attempt()
                return last.status == status
            }
            return last
        }
    }

    @Test func memcachedDownThenBackWithoutARestart() throws {
        let memcached = try MemcachedProcess()
        let setup = try Setup(memcached: [memcached.address])
        defer { setup.server.stop() }
        let before = try setup.firstPage()
        let token = try #require(before.paging["token"] as? String)
        let ready = try setup.alice.call("GET", "/readyz")
        #expect(ready.status == 200)
        #expect(ready.object["memcached"] as? String == "up")

        memcached.kill()
        let small = try setup.alice.call("GET", "/v1/terms?set_id=\(setup.small)&limit=100")
        #expect(small.status == 200, "a single-page result needs no snapshot")
        #expect(small.paging["token"] is NSNull)
        #expect(small.rows.count == 5)
        for response in [try setup.firstPage(), try setup.page(token, 2)] {
            #expect(response.status == 503, "\(response.text)")
            #expect(response.problemCode == "paging_unavailable")
            #expect(response.header("Retry-After") == "1")
        }
        let notReady = try setup.alice.call("GET", "/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.object["memcached"] as? String == "down")
        #expect(notReady.object["postgresql"] as? String == "up")
        #expect((notReady.object["detail"] as? String)?.contains("memcached") == true)

        try memcached.restart()
        let again = try setup.eventually(200) { try setup.firstPage() }
        #expect(again.status == 200, "paging works again once memcached is back")
        let newToken = try #require(again.paging["token"] as? String)
        let second = try setup.page(newToken, 2)
        #expect(second.status == 200)
        #expect(second.rows.count == 100)
        let lost = try setup.page(token, 2)
        #expect(lost.status == 404, "the restarted memcached lost the old snapshot")
        #expect(try setup.eventually(200) { try setup.alice.call("GET", "/readyz") }.status == 200)
    }

    /// Issue 21, faults: a memcached restart under paging load. Four clients page
    /// through 250 terms and read a 5-term set while memcached is killed and
    /// started again empty. Single-page Index answers 200 throughout; a page
    /// is the right page or one of the documented refusals (503
    /// `paging_unavailable` with Retry-After while it is down, 404
    /// `paging_token_not_found` for a token it lost), never a 500 or a hang.
    @Test func pagingLoadThroughAMemcachedRestart() throws {
        let memcached = try MemcachedProcess()
        let log = JSONLogTests.Lines()
        let setup = try Setup(
            memcached: [memcached.address],
            logger: Logger(label: "ferry") { JSONLogHandler(label: $0, logLevel: .warning) { log.append($0) } })
        defer { setup.server.stop() }
        let ids = try PagingSeed.orderedIDs(setup.server, set: setup.big)
        let oldToken = try #require(try setup.firstPage().paging["token"] as? String)

        struct Outcome: Sendable {
            let small: Bool; let page: Int; let status: Int; let code: String?; let retryAfter: Bool; let right: Bool; let seconds: Double
        }
        let outcomes = Mutex<[Outcome]>([])
        let stop = Atomic<Bool>(false)
        let (port, bearer, big, small) = (setup.server.port, setup.alice.token, setup.big, setup.small)
        let group = DispatchGroup()
        // A wait that fails must not leave the clients running.
        defer { stop.store(true, ordering: .relaxed); _ = group.wait(timeout: .now() + 30) }
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                let client = TestHTTPClient(port: port, timeout: 10)
                func get(_ path: String) -> (TestHTTPClient.Response?, Double) {
                    let began = Date()
                    let response = try? client.request("GET", path, headers: [("Authorization", "Bearer \(bearer)")])
                    if response == nil { client.close() }
                    return (response, Date().timeIntervalSince(began))
                }
                func record(small: Bool, page: Int, _ answer: (TestHTTPClient.Response?, Double), right: Bool) {
                    let (response, seconds) = answer
                    outcomes.withLock {
                        $0.append(
                            Outcome(
                                small: small, page: page, status: response?.status ?? -1, code: response?.problemCode,
                                retryAfter: response?.header("Retry-After") != nil, right: right, seconds: seconds))
                    }
                }
                while !stop.load(ordering: .relaxed) {
                    let single = get("/v1/terms?set_id=\(small)&limit=100")
                    record(small: true, page: 1, single, right: single.0?.rows.count == 5 && single.0?.paging["token"] is NSNull)
                    let first = get("/v1/terms?set_id=\(big)&limit=100")
                    record(small: false, page: 1, first, right: first.0?.rows.map(\.id) == Array(ids[0..<100]))
                    // A real sleep: a client backing off while paging is refused, as load; it waits for nothing.
                    guard let token = first.0?.paging["token"] as? String else { usleep(20_000); continue }
                    for page in 2...3 {
                        let later = get("/v1/terms?set_id=\(big)&limit=100&paging_token=\(token)&page=\(page)")
                        record(small: false, page: page, later, right: later.0?.rows.map(\.id) == Array(ids[(page - 1) * 100..<min(page * 100, 250)]))
                    }
                }
            }
        }
        func count(_ match: (Outcome) -> Bool) -> Int { outcomes.withLock { $0.filter(match).count } }
        try waitUntil("eight third pages to be served", within: 20) { count({ $0.page == 3 && $0.status == 200 }) >= 8 }
        // Counted before the kill: a loaded machine's clients record 503s while
        // kill() waits for the process to go, and those are the outage too.
        let down = count { _ in true }
        memcached.kill()
        try waitUntil("four 503s while memcached is down", within: 20) { count({ $0.status == 503 }) >= 4 }
        try memcached.restart()
        let pagedBefore = count { $0.page == 3 && $0.status == 200 }
        let lost = try setup.eventually(404) { try setup.page(oldToken, 2) }
        #expect(lost.status == 404 && lost.problemCode == "paging_token_not_found", "a token memcached lost: \(lost.status) \(lost.text.prefix(200))")
        _ = eventually(within: 10) { count({ $0.page == 3 && $0.status == 200 }) >= pagedBefore + 8 }
        let pagingAgain = count { $0.page == 3 && $0.status == 200 } - pagedBefore
        stop.store(true, ordering: .relaxed)
        #expect(group.wait(timeout: .now() + 30) == .success, "a paging client hung")

        let all = outcomes.withLock { $0 }
        let singles = all.filter(\.small)
        #expect(singles.allSatisfy { $0.status == 200 && $0.right }, "single-page Index: \(Set(singles.map(\.status)))")
        let pages = all.filter { !$0.small }
        for outcome in pages {
            switch (outcome.status, outcome.code) {
            case (200, _): #expect(outcome.right, "page \(outcome.page) served with the wrong rows")
            case (503, "paging_unavailable"?): #expect(outcome.retryAfter, "503 without Retry-After")
            case (404, "paging_token_not_found"?) where outcome.page > 1: break
            default: Issue.record("page \(outcome.page): \(outcome.status) \(outcome.code ?? "-")")
            }
        }
        #expect(all.allSatisfy { $0.seconds < 5 }, "a request took \(all.map(\.seconds).max() ?? 0) s")
        #expect(all[down...].contains { !$0.small && $0.status == 503 }, "the outage was never seen")
        #expect(pagingAgain >= 8, "paging did not come back after the restart")
        // The outage is logged, but not once per refused request.
        let warnings = log.all.map { String(decoding: $0, as: UTF8.self) }.filter { $0.contains("paging snapshot") }
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = warnings.compactMap { parser.date(from: String($0.dropFirst(#"{"ts":""#.count).prefix(24))) }.sorted()
        let gaps = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect(!warnings.isEmpty && times.count == warnings.count, "the outage's log: \(warnings.prefix(3))")
        #expect(gaps.allSatisfy { $0 >= 1 }, "\(warnings.count) warnings, some less than a second apart: \(gaps)")
        let refused = Dictionary(grouping: pages.filter { $0.status != 200 }, by: { "\($0.status) \($0.code ?? "-")" }).mapValues(\.count)
        print(
            "fault memcached-restart: \(all.count) requests (\(singles.count) single-page, all 200); pages refused \(refused.sorted { $0.key < $1.key }); \(warnings.count) warning lines; slowest \(String(format: "%.2f", all.map(\.seconds).max() ?? 0)) s"
        )
    }

    @Test func oneOfTwoMemcachedServersStopsMidRun() throws {
        let first = try MemcachedProcess()
        let second = try MemcachedProcess()
        let setup = try Setup(memcached: [first.address, second.address])
        defer { setup.server.stop() }
        let ids = try PagingSeed.orderedIDs(setup.server, set: setup.big)
        var tokens: [String] = []
        // A snapshot's header and its chunks are keys of their own, each on the server its
        // hash picks, so a page survives only when both of its keys are on the surviving
        // server: about one token in four. With 12 tokens, 3 % of runs lost them all and
        // failed "served > 0"; with 40, (3/4)^40 is about 1e-5.
        for _ in 0..<40 {
            let response = try setup.firstPage()
            try #require(response.status == 200)
            tokens.append(try #require(response.paging["token"] as? String))
        }
        first.kill()
        var served = 0
        var refused = 0
        for token in tokens {
            let response = try setup.page(token, 2)
            switch response.status {
            case 200:
                served += 1
                #expect(response.rows.map(\.id) == Array(ids[100..<200]), "a served page is always the right page")
            case 404, 503:
                refused += 1
                #expect(["paging_token_not_found", "paging_unavailable"].contains(response.problemCode ?? ""))
            default:
                Issue.record("unexpected \(response.status): \(response.text.prefix(200))")
            }
        }
        #expect(served > 0, "snapshots on the surviving server still serve")
        #expect(refused > 0, "snapshots on the stopped server are gone, never served with gaps")
        let fresh = try setup.eventually(200) { try setup.firstPage() }
        #expect(fresh.status == 200, "new snapshots go to the surviving server")
        let token = try #require(fresh.paging["token"] as? String)
        let page3 = try setup.page(token, 3)
        #expect(page3.status == 200)
        #expect(page3.rows.map(\.id) == Array(ids[200..<250]))
        let ready = try setup.alice.call("GET", "/readyz")
        #expect(ready.status == 503, "readiness names memcached while one server is down")
    }

    @Test func twoFerryProcessesShareOneMemcached() throws {
        let memcached = try MemcachedProcess()
        let setup = try Setup(memcached: [memcached.address])
        defer { setup.server.stop() }
        let other = try TestFerryInstance(database: setup.server.database) { $0.memcached.servers = [memcached.address] }
        defer { other.stop() }
        let ids = try PagingSeed.orderedIDs(setup.server, set: setup.big)
        let onOther = setup.alice.on(other.client())
        let first = try setup.firstPage()
        let token = try #require(first.paging["token"] as? String)
        let next = try #require(first.nextLink)
        let second = try onOther.call("GET", next)
        #expect(second.status == 200, "page 2 from the second process: \(second.text.prefix(200))")
        #expect(second.rows.map(\.id) == Array(ids[100..<200]))
        let third = try setup.page(token, 3)
        #expect(third.rows.map(\.id) == Array(ids[200..<250]))
        let fromOther = try onOther.call("GET", "/v1/terms?set_id=\(setup.big)&limit=100")
        let otherToken = try #require(fromOther.paging["token"] as? String)
        #expect(try setup.page(otherToken, 2).rows.map(\.id) == Array(ids[100..<200]))
    }
}
