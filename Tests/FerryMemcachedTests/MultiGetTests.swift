import FerryTestSupport
import Testing
@testable import FerryMemcached

@Suite struct MultiGetTests {
    @Test func multiGetAcrossTwoServers() throws {
        let a = try MemcachedProcess()
        let b = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([a.address, b.address]))
        let keys = (0..<60).map { "chunk:\($0)" }
        var expected: [String: [UInt8]] = [:]
        for key in keys {
            let value = randomBytes(Int.random(in: 0...3000))
            try client.set(key, value, ttlSeconds: 60)
            expected[key] = value
        }
        // The keys really landed on both servers: ask each one alone.
        let onlyA = try MemcachedClient(configuration: .relaxed([a.address]))
        let onlyB = try MemcachedClient(configuration: .relaxed([b.address]))
        let onA = try onlyA.getMany(keys)
        let onB = try onlyB.getMany(keys)
        #expect(onA.count > 10 && onB.count > 10)
        #expect(onA.count + onB.count == keys.count)
        #expect(Set(onA.keys).isDisjoint(with: onB.keys))
        for key in keys {
            #expect(try client.server(forKey: key) == (onA[key] != nil ? a.address : b.address))
        }

        let asked = keys + ["missing:1", "missing:2", "chunk:0"]
        let found = try client.getMany(asked)
        #expect(found == expected)
        #expect(try client.getMany([]) == [:])
        #expect(try client.getMany(["missing:3"]) == [:])
    }

    @Test func multiGetOfManyKeys() throws {
        let a = try MemcachedProcess()
        let b = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([a.address, b.address]))
        let keys = (0..<2000).map { "k\($0)" }
        for key in keys where key.hasSuffix("7") {
            try client.set(key, Array(key.utf8), ttlSeconds: 60)
        }
        let found = try client.getMany(keys)
        #expect(found.count == 200)
        #expect(found.allSatisfy { $0.value == Array($0.key.utf8) })
    }
}
