import FerryTestSupport
import Foundation
import Testing
@testable import FerryMemcached

@Suite struct BasicOperationTests {
    @Test func setGetDeleteRoundTrip() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([server.address]))
        let value = randomBytes(1000)
        try client.set("alpha", value, ttlSeconds: 60)
        #expect(try client.get("alpha") == value)
        try client.set("alpha", [1, 2, 3], ttlSeconds: 60)
        #expect(try client.get("alpha") == [1, 2, 3])
        #expect(try client.delete("alpha") == true)
        #expect(try client.get("alpha") == nil)
        #expect(try client.delete("alpha") == false)
    }

    @Test func emptyValueIsNotAMiss() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([server.address]))
        try client.set("empty", [], ttlSeconds: 60)
        #expect(try client.get("empty") == [])
        #expect(try client.getMany(["empty"]) == ["empty": []])
    }

    @Test func missIsNilButOutageIsUnavailable() throws {
        let server = try MemcachedProcess()
        let live = try MemcachedClient(configuration: .relaxed([server.address]))
        #expect(try live.get("never-set") == nil)

        let nobody = try freeLoopbackPort()  // nothing listens there
        let dead = try MemcachedClient(configuration: .init(servers: ["127.0.0.1:\(nobody)"]))
        for _ in 0..<3 {
            let (result, seconds) = timed { try dead.get("never-set") }
            #expect(throws: MemcachedError.self) { try result.get() }
            #expect(kind(of: result) == .unavailable)
            #expect(seconds < 1)
        }
        let (setResult, _) = timed { try dead.set("k", [1], ttlSeconds: 5) }
        #expect(kind(of: setResult) == .unavailable)
        let (deleteResult, _) = timed { try dead.delete("k") }
        #expect(kind(of: deleteResult) == .unavailable)
        let (manyResult, _) = timed { try dead.getMany(["a", "b"]) }
        #expect(kind(of: manyResult) == .unavailable)
    }

    @Test func ttlExpires() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([server.address]))
        try client.set("short", [7], ttlSeconds: 1)
        try client.set("long", [8], ttlSeconds: 60)
        #expect(try client.get("short") == [7])
        // memcached's clock ticks in whole seconds: 1 s may last up to 2.
        pause(seconds: 2.1)
        #expect(try client.get("short") == nil)
        #expect(try client.get("long") == [8])
    }

    @Test func ttlOutOfRangeIsRefused() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([server.address]))
        for ttl in [-1, 2_592_001] {
            let error = #expect(throws: MemcachedError.self) { try client.set("k", [1], ttlSeconds: ttl) }
            #expect(error?.kind == .invalidArgument)
        }
    }

    @Test func valuesNearTheItemLimit() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([server.address]))
        let mib = 1 << 20
        let big = randomBytes(mib - 4096)
        try client.set("big", big, ttlSeconds: 60)
        #expect(try client.get("big") == big)
        #expect(try client.getMany(["big", "missing"]) == ["big": big])

        let error = #expect(throws: MemcachedError.self) {
            try client.set("huge", randomBytes(mib + 1), ttlSeconds: 60)
        }
        #expect(error?.kind == .tooLarge)
        let error2 = #expect(throws: MemcachedError.self) {
            try client.set("huger", randomBytes(3 * mib), ttlSeconds: 60)
        }
        #expect(error2?.kind == .tooLarge)
        // The connection is still in step with the server afterwards.
        #expect(try client.get("huge") == nil)
        try client.set("small", [1], ttlSeconds: 60)
        #expect(try client.get("small") == [1])
        #expect(try client.get("big") == big)
    }

    @Test(arguments: [
        "", "has space", "tab\there", "new\nline", "nul\u{0}byte", "del\u{7F}", "é-non-ascii",
        String(repeating: "k", count: 251),
    ])
    func invalidKeysAreRefusedBeforeSending(_ key: String) throws {
        // No server at all: the key check must come first.
        let client = try MemcachedClient(configuration: .init(servers: ["127.0.0.1:1"]))
        for operation in [
            { _ = try client.get(key) },
            { try client.set(key, [1], ttlSeconds: 5) },
            { _ = try client.delete(key) },
            { _ = try client.getMany(["fine", key]) },
        ] as [() throws -> Void] {
            let error = #expect(throws: MemcachedError.self) { try operation() }
            #expect(error?.kind == .invalidKey)
        }
    }

    @Test func longestValidKeyWorks() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([server.address]))
        let key = String(repeating: "k", count: 250)
        try client.set(key, [1], ttlSeconds: 60)
        #expect(try client.get(key) == [1])
    }

    @Test(arguments: [[], ["nohost:"], [":11211"], ["host:99999"], ["::1:11211"], ["[::1"], ["a b:1"]])
    func badConfigurationsAreRefused(_ servers: [String]) {
        let error = #expect(throws: MemcachedError.self) {
            _ = try MemcachedClient(configuration: .init(servers: servers))
        }
        #expect(error?.kind == .invalidArgument)
    }

    @Test func configurationParsesServerLists() throws {
        let configuration = MemcachedConfiguration(serverList: " 127.0.0.1:1 ,[::1]:2,localhost")
        #expect(configuration.servers == ["127.0.0.1:1", "[::1]:2", "localhost"])
        let addresses = try configuration.servers.map { s throws(MemcachedError) in try MemcachedServerAddress(parsing: s) }
        #expect(addresses.map(\.description) == ["127.0.0.1:1", "[::1]:2", "localhost:11211"])
    }
}

/// The error kind a result failed with, or nil if it succeeded.
func kind<T>(of result: Result<T, Error>) -> MemcachedError.Kind? {
    if case .failure(let error) = result { return (error as? MemcachedError)?.kind }
    return nil
}
