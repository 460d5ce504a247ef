import Dispatch
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Issue 21, faults: `kill -9` of `ferry serve` under 8 writers. After a
/// restart every write answered 2xx exists, no write exists without its
/// idempotency record, and a retry of any write with its key (the ones in
/// flight at the kill above all) never makes a second row.
///
/// The writes are term creates without an id, so the server picks the id: a
/// retry that ran again instead of replaying would leave two rows with one word.
/// `FERRY_FAULT_ROUNDS` (default 3) kills and restarts that many times.
@Suite struct CrashRestartTests {
    /// One keyed write: its body, and the status it got (nil: no answer, the
    /// connection died with the process).
    struct Write: Sendable {
        let key: String
        let word: String
        let body: [UInt8]
        let status: Int?
        let id: String?
    }

    @Test func killNineUnderEightWritersLosesAndDuplicatesNothing() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["FERRY_FAULT_ROUNDS"] ?? "") ?? 3
        let database = try ScratchDatabase()
        defer { database.drop() }
        let owner = try database.connect()
        defer { owner.close() }
        let token = try TestServerless.token(owner, user: "crash_writer")
        let ferry = try FerryServeProcess(databaseURL: database.appURL, settings: ["FERRY_DATABASE_POOL_SIZE": "8"])
        let auth = ("Authorization", "Bearer \(token)")
        let made = try TestHTTPClient(port: ferry.port).request("POST", "/v1/study_sets", headers: [auth], json: ["title": "crash"])
        try #require(made.status == 201, "\(made.text)")
        let set = try #require(made.object["id"] as? String)

        var writes: [Write] = []
        var killedAt: [Int] = []
        for round in 0..<rounds {
            let ledger = Mutex<[Write]>([])
            let port = ferry.port
            let group = DispatchGroup()
            for writer in 0..<8 {
                DispatchQueue.global().async(group: group) {
                    let client = TestHTTPClient(port: port, timeout: 20)
                    for n in 0... {
                        let name = "\(round)-\(writer)-\(n)"
                        let body = Array(#"{"set_id":"\#(set)","word":"w\#(name)"}"#.utf8)
                        let response = try? client.request(
                            "POST", "/v1/terms",
                            headers: [auth, ("Content-Type", "application/json"), ("Idempotency-Key", "k\(name)")], body: body)
                        let write = Write(
                            key: "k\(name)", word: "w\(name)", body: body, status: response?.status,
                            id: response?.object["id"] as? String)
                        ledger.withLock { $0.append(write) }
                        // The first failure is the kill: this writer's last write was in flight.
                        if response == nil { return }
                    }
                }
            }
            // Checked, not thrown: the kill below is what ends the writers.
            let busy = eventually(within: 20, every: 0.01) { ledger.withLock { $0.filter { $0.status == 201 }.count } >= 40 + 20 * round }
            #expect(busy, "round \(round): the writers did not get 40 writes in before the kill")
            ferry.kill()
            #expect(group.wait(timeout: .now() + 30) == .success, "a writer hung on a killed server")
            let roundWrites = ledger.withLock { $0 }
            killedAt.append(roundWrites.filter { $0.status != nil }.count)
            writes += roundWrites
            try ferry.start()
        }

        // 503 is a fair answer on a loaded machine (the pool was busy); it must have written nothing.
        let unexpected = writes.filter { $0.status != nil && $0.status != 201 && $0.status != 503 }
        #expect(unexpected.isEmpty, "writes answered other than 201 or 503: \(unexpected.prefix(5).map { "\($0.key) \($0.status ?? 0)" })")
        let inFlight = writes.filter { $0.status == nil }
        #expect(inFlight.count == 8 * rounds, "every writer's last write was cut off by the kill")

        // Before any retry: what the crash left behind.
        let rows = try owner.query("SELECT word, id::text FROM app.terms WHERE set_id = $1::uuid", [set]).rows
        var idsByWord: [String: [String]] = [:]
        for row in rows { idsByWord[row[0] ?? "", default: []].append(row[1] ?? "") }
        let records = try owner.query("SELECT key, status FROM ferry.idempotency_keys WHERE key LIKE 'k%'").rows
        let completed = Set(records.filter { $0[1] == "201" }.map { $0[0] ?? "" })
        #expect(records.allSatisfy { $0[1] != nil }, "a claim without its response survived the crash")
        for write in writes where write.status == 201 {
            #expect(idsByWord[write.word] == [write.id ?? ""], "answered \(write.key) but the rows are \(idsByWord[write.word] ?? [])")
        }
        for (word, ids) in idsByWord {
            #expect(ids.count == 1, "\(ids.count) rows for \(word)")
            #expect(completed.contains("k" + word.dropFirst()), "\(word) exists without its idempotency record")
        }
        for write in writes where write.status == 503 {
            #expect(idsByWord[write.word] == nil, "\(write.key) answered 503 but was written")
        }
        let survivedInFlight = inFlight.filter { idsByWord[$0.word] != nil }.count

        // Every write again with its key: replayed when it was written, run when not.
        let client = TestHTTPClient(port: ferry.port, timeout: 20)
        var replayed = 0
        for write in writes {
            // A killed server's transaction may hold the key's lock until PostgreSQL notices the
            // closed socket (409); a loaded machine may answer 503. Both say: retry.
            var last: TestHTTPClient.Response?
            _ = try eventually(within: 10, every: 0.1) {
                last = try client.request(
                    "POST", "/v1/terms", headers: [auth, ("Content-Type", "application/json"), ("Idempotency-Key", write.key)],
                    body: write.body)
                return last?.status != 409 && last?.status != 503
            }
            let retry = try #require(last)
            #expect(retry.status == 201, "\(write.key): \(retry.status) \(retry.text.prefix(200))")
            let existed = idsByWord[write.word]?.first
            if let existed {
                replayed += 1
                #expect(retry.header("Idempotent-Replayed") == "true", "\(write.key) ran again")
                #expect(retry.object["id"] as? String == existed)
            } else {
                #expect(retry.header("Idempotent-Replayed") == nil)
            }
        }
        let counts = try owner.query(
            "SELECT count(*), count(DISTINCT word) FROM app.terms WHERE set_id = $1::uuid", [set]
        ).rows[0]
        #expect(counts[0] == String(writes.count) && counts[1] == String(writes.count), "rows, words after the retries: \(counts)")
        print(
            "fault kill-9: \(rounds) round(s), 8 writers; answered before the kills \(killedAt); \(inFlight.count) in flight, \(survivedInFlight) of them committed; \(writes.count) retries, \(replayed) replayed; rows \(counts[0] ?? "-") = words \(counts[1] ?? "-")"
        )
    }
}
