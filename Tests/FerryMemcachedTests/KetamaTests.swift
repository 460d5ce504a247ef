import FerryTestSupport
import Testing
@testable import FerryMemcached

@Suite struct KetamaTests {
    let keys = (0..<1000).map { "token-\($0):chunk" }

    /// Mapping alone does no I/O, so the servers need not exist for this part.
    @Test func addingAThirdServerMovesAboutAThird() throws {
        let two = try MemcachedClient(configuration: .init(servers: ["127.0.0.1:40001", "127.0.0.1:40002"]))
        let three = try MemcachedClient(
            configuration: .init(
                servers: ["127.0.0.1:40001", "127.0.0.1:40002", "127.0.0.1:40003"]))
        var moved = 0
        var perServer: [String: Int] = [:]
        for key in keys {
            let before = try two.server(forKey: key)
            let after = try three.server(forKey: key)
            perServer[before, default: 0] += 1
            if before != after {
                moved += 1
                // Consistent hashing: keys only move to the new server.
                #expect(after == "127.0.0.1:40003")
            }
        }
        #expect(moved > 150 && moved <= 500, "moved \(moved) of 1000")
        #expect(perServer.values.allSatisfy { $0 > 300 }, "uneven split \(perServer)")
    }

    /// The same with real servers: what was written through two servers is still
    /// found for the keys that did not move once a third is added.
    @Test func dataSurvivesAddingAServer() throws {
        let a = try MemcachedProcess()
        let b = try MemcachedProcess()
        let c = try MemcachedProcess()
        let two = try MemcachedClient(configuration: .relaxed([a.address, b.address]))
        for key in keys { try two.set(key, [1], ttlSeconds: 60) }
        let three = try MemcachedClient(configuration: .relaxed([a.address, b.address, c.address]))
        let found = try three.getMany(keys)
        #expect(found.count >= 500 && found.count < 900, "still found \(found.count) of 1000")
    }
}
