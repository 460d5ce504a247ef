import Foundation
import Testing
@testable import FerryMemcached

/// Against the shared dev/CI memcached named by FERRY_TEST_MEMCACHED. Keys are unique
/// per run, so parallel runs and other users of that server do not collide.
@Suite struct SharedServerTests {
    @Test func sharedServerRoundTrip() throws {
        let servers = try #require(
            ProcessInfo.processInfo.environment["FERRY_TEST_MEMCACHED"],
            "FERRY_TEST_MEMCACHED is not set; export it as host:port[,host:port] (deploy/test.sh does)")
        let client = try MemcachedClient(configuration: MemcachedConfiguration(serverList: servers))
        #expect(client.ping(), "memcached at \(servers) does not answer")
        let key = uniqueKey("ferry-memcached-test")
        let value = randomBytes(10_000)
        try client.set(key, value, ttlSeconds: 30)
        #expect(try client.get(key) == value)
        #expect(try client.getMany([key, key + ":missing"]) == [key: value])
        #expect(try client.delete(key))
        #expect(try client.get(key) == nil)
    }
}
