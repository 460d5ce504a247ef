import Foundation
import Synchronization
import Testing

extension Resources {
    /// Batches racing each other, and results compared with lone requests.
    @Suite struct BatchConcurrencyTests {
        @Test func aBatchResultIsWhatTheRequestGetsAlone() throws {
            let me = try ResourceFixture.user("batchc")
            let set = try me.createSet("Same").id
            let alone = try me.call("GET", "/v1/study_sets/\(set)")
            let batch = try me.call("POST", "/v1/batch", json: ["operations": [["method": "GET", "path": "/v1/study_sets/\(set)"]]])
            #expect(batch.status == 200)
            let result = try #require((batch.object["results"] as? [[String: Any]])?.first)
            #expect(result["status"] as? Int == alone.status)
            let headers = result["headers"] as? [String: String] ?? [:]
            #expect(headers["ETag"] == alone.header("ETag"))
            #expect(headers["Last-Modified"] == alone.header("Last-Modified"))
            let body = try JSONSerialization.data(withJSONObject: result["body"] ?? NSNull(), options: [.sortedKeys])
            let lone = try JSONSerialization.data(withJSONObject: alone.json ?? NSNull(), options: [.sortedKeys])
            #expect(body == lone)
        }

        @Test func crossingBatchesAllApplyOrAnswer503() throws {
            let me = try ResourceFixture.user("batchc")
            let a = try me.createSet("A").id
            let b = try me.createSet("B").id
            let (server, token, userID) = (me.server, me.token, me.userID)
            let statuses = Mutex<[Int]>([])
            for round in 0..<4 {
                DispatchQueue.concurrentPerform(iterations: 2) { side in
                    let api = API(client: server.client(), token: token, userID: userID, server: server)
                    let order = side == 0 ? [a, b] : [b, a]
                    let operations: [[String: Any]] = order.map { id in
                        [
                            "method": "PATCH", "path": "/v1/study_sets/\(id)", "headers": ["If-Match": "*"],
                            "body": ["description": "round \(round) side \(side)"],
                        ]
                    }
                    let status = (try? api.call("POST", "/v1/batch", json: ["operations": operations]))?.status ?? -1
                    statuses.withLock { $0.append(status) }
                }
            }
            let all = statuses.withLock { $0 }
            #expect(all.count == 8)
            #expect(all.allSatisfy { $0 == 200 || $0 == 503 }, "\(all)")
            #expect(all.contains(200))
            // Each set ends with one batch's value, and both sets agree on which (all or nothing).
            let da = try me.call("GET", "/v1/study_sets/\(a)").object["description"] as? String
            let db = try me.call("GET", "/v1/study_sets/\(b)").object["description"] as? String
            #expect(da != nil && da?.hasPrefix("round 3") == true)
            #expect(da == db, "the batches serialised: the later one wrote both sets")
        }
    }
}
