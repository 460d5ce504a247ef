import FerryRank
import Foundation
import Synchronization
import Testing

extension Resources {
    /// The seed design's failure, replayed: two offline devices reorder one
    /// set's terms, then sync in every order. Each device computes its ranks
    /// with FerryRank, as the Swift client library does.
    @Suite struct OrderedSeedScenarioTests {
        /// One offline edit, ready to send.
        struct Request: @unchecked Sendable {  // only read after creation
            let method: String
            let path: String
            let json: Any?
        }

        enum SyncOrder: CaseIterable { case oneThenTwo, twoThenOne, oneShuffledParallelThenTwo, twoThenOneShuffledParallel }

        /// Ids with a run-specific prefix and a label-ordered suffix, so ties
        /// on rank break the same way in every run.
        static func id(_ run: String, _ n: Int) -> String { run + String(format: "-0000-4000-8000-%012x", n) }

        /// Runs the scenario once on a fresh set; returns the final order (words) as the server and both devices see it.
        static func run(_ order: SyncOrder) throws -> [String] {
            let device1 = try ResourceFixture.user("seedrank")
            let device2 = API(client: device1.server.client(), token: device1.token, userID: device1.userID, server: device1.server)
            let run = String(UUID().uuidString.prefix(8)).lowercased()
            let set = try device1.createSet("Ordered").id
            let seedRanks = try Rank.spread(10, between: nil, and: nil)
            let seed: [[String: Any]] = (0..<10).map {
                ["id": id(run, $0), "set_id": set, "word": "t\($0 + 1)", "rank": seedRanks[$0]]
            }
            let created = try device1.call("POST", "/v1/terms", json: seed)
            #expect(created.status == 201, "\(created.text)")

            // 1. Both devices download the set, then go offline.
            let local1 = try ComputedRankTests.order(device1, set: set)
            let local2 = try ComputedRankTests.order(device2, set: set)
            #expect(local1.map(\.word) == (1...10).map { "t\($0)" })
            #expect(local2.map(\.word) == local1.map(\.word))

            // 2. Device 1: 3 terms at position 2, delete term 5.
            var requests1: [Request] = []
            var upper = local1[2].rank
            var lower = local1[1].rank
            for (n, word) in ["one-a", "one-b", "one-c"].enumerated() {
                let key = try Rank.between(lower, upper)
                requests1.append(
                    Request(
                        method: "POST", path: "/v1/terms",
                        json: ["id": id(run, 100 + n), "set_id": set, "word": word, "rank": key]))
                lower = key
            }
            requests1.append(Request(method: "DELETE", path: "/v1/terms/\(id(run, 4))?revision=1", json: nil))

            // 3. Device 2: 2 terms at position 2, the last term to first place, delete term 7.
            var requests2: [Request] = []
            upper = local2[2].rank
            lower = local2[1].rank
            for (n, word) in ["two-a", "two-b"].enumerated() {
                let key = try Rank.between(lower, upper)
                requests2.append(
                    Request(
                        method: "POST", path: "/v1/terms",
                        json: ["id": id(run, 200 + n), "set_id": set, "word": word, "rank": key]))
                lower = key
            }
            requests2.append(
                Request(
                    method: "PATCH", path: "/v1/terms/\(id(run, 9))",
                    json: ["rank": try Rank.first(before: local2[0].rank), "revision": 1]))
            requests2.append(Request(method: "DELETE", path: "/v1/terms/\(id(run, 6))?revision=1", json: nil))

            // 4. Sync.
            func send(_ api: API, _ requests: [Request]) throws {
                for request in requests {
                    let response = try api.call(request.method, request.path, json: request.json)
                    #expect((200...201).contains(response.status), "\(request.method) \(request.path): \(response.text)")
                }
            }
            func parallel(_ api: API, _ requests: [Request]) {
                let failures = Mutex<[String]>([])
                let (server, token, userID) = (api.server, api.token, api.userID)
                DispatchQueue.concurrentPerform(iterations: requests.count) { index in
                    let request = requests[index]
                    let own = API(client: server.client(), token: token, userID: userID, server: server)
                    do {
                        let response = try own.call(request.method, request.path, json: request.json)
                        if !(200...201).contains(response.status) { failures.withLock { $0.append(response.text) } }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                #expect(failures.withLock { $0 }.isEmpty)
            }
            switch order {
            case .oneThenTwo:
                try send(device1, requests1)
                try send(device2, requests2)
            case .twoThenOne:
                try send(device2, requests2)
                try send(device1, requests1)
            case .oneShuffledParallelThenTwo:
                parallel(device1, requests1.shuffled())
                try send(device2, requests2)
            case .twoThenOneShuffledParallel:
                try send(device2, requests2)
                parallel(device1, requests1.shuffled())
            }

            // Both devices pull and show the server's order.
            let final1 = try ComputedRankTests.words(device1, set: set)
            let final2 = try ComputedRankTests.words(device2, set: set)
            #expect(final1 == final2)
            return final1
        }

        @Test func everySyncOrderEndsInTheSameOrder() throws {
            var results: [[String]] = []
            for order in SyncOrder.allCases {
                results.append(try Self.run(order))
            }
            for _ in 0..<2 { results.append(try Self.run(.oneShuffledParallelThenTwo)) }
            let final = try #require(results.first)
            for result in results { #expect(result == final) }
            // Each insert exactly once, both deletes applied.
            for word in ["one-a", "one-b", "one-c", "two-a", "two-b"] { #expect(final.filter { $0 == word }.count == 1, "\(word)") }
            #expect(!final.contains("t5"))
            #expect(!final.contains("t7"))
            #expect(final.count == 10 + 5 - 2)
            // Each device's own inserts keep their relative order, between t2 and t3.
            func position(_ word: String) -> Int { final.firstIndex(of: word) ?? -1 }
            #expect(position("one-a") < position("one-b") && position("one-b") < position("one-c"))
            #expect(position("two-a") < position("two-b"))
            for word in ["one-a", "one-b", "one-c", "two-a", "two-b"] {
                #expect(position("t2") < position(word) && position(word) < position("t3"), "\(word)")
            }
            // The moved term is first.
            #expect(final.first == "t10")
        }
    }
}
