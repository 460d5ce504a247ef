import Foundation
import Testing
@testable import Ferry

/// The plan cache's reuse, replanning after a schema change, and bound.
@Suite struct PlanCacheTests {
    private func resource(_ name: String, columns: [String]) -> Resource {
        Resource(
            name: name, schema: "app",
            columns: columns.map {
                Column(
                    name: $0, type: "text", nullable: true, hasDefault: false, insertable: true, updatable: true,
                    references: nil, defaultSQL: nil)
            },
            uniqueKeys: [["id"]], constraints: nil)
    }

    @Test func buildsOncePerResourceAndKey() {
        let cache = PlanCache()
        let terms = resource("terms", columns: ["id", "word"])
        var builds = 0
        for _ in 0..<3 {
            #expect(
                cache.sql(terms, .read) {
                    builds += 1; return "SELECT 1"
                } == "SELECT 1")
        }
        #expect(builds == 1)
        #expect(
            cache.sql(terms, .readMany) {
                builds += 1; return "SELECT 2"
            } == "SELECT 2")
        #expect(
            cache.sql(resource("sets", columns: ["id"]), .read) {
                builds += 1; return "SELECT 3"
            } == "SELECT 3")
        #expect(builds == 3)
        #expect(cache.count == 3)
    }

    @Test func aChangedTableReplans() {
        let cache = PlanCache()
        _ = cache.sql(resource("terms", columns: ["id", "word"]), .read) { "old" }
        #expect(cache.sql(resource("terms", columns: ["id", "word", "note"]), .read) { "new" } == "new")
        #expect(cache.sql(resource("terms", columns: ["id", "word", "note"]), .read) { "never" } == "new")
    }

    @Test func startsOverWhenFull() {
        let cache = PlanCache(capacity: 4)
        let terms = resource("terms", columns: ["id"])
        for shape in 0..<4 { _ = cache.sql(terms, .index("\(shape)", drives: [])) { "q\(shape)" } }
        #expect(cache.count == 4)
        _ = cache.sql(terms, .index("4", drives: [])) { "q4" }
        #expect(cache.count == 1)
    }

    @Test func concurrentReadersAndWritersAgree() {
        let cache = PlanCache(capacity: 64)
        let terms = resource("terms", columns: ["id"])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<2_000 {
                let shape = (round * 7 + worker) % 100
                let sql = cache.sql(terms, .index("\(shape)", drives: [])) { "q\(shape)" }
                #expect(sql == "q\(shape)")
            }
        }
    }
}
