import FerryTestSupport
import Testing
@testable import FerryMemcached

@Suite struct PingTests {
    @Test func pingReportsEachServer() throws {
        let a = try MemcachedProcess()
        let b = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .relaxed([a.address, b.address]))
        #expect(client.ping())
        #expect(
            client.pingEach() == [
                MemcachedServerStatus(server: a.address, isUp: true, message: nil),
                MemcachedServerStatus(server: b.address, isUp: true, message: nil),
            ])
        b.kill()
        let (statuses, seconds) = timed { client.pingEach() }
        let list = try statuses.get()
        #expect(list.map(\.isUp) == [true, false])
        #expect(list[1].message?.isEmpty == false)
        #expect(seconds < 1)
        #expect(!client.ping())
        // Probing does not disturb normal calls: keys of b are rerouted to a.
        try client.set("after-ping", [1], ttlSeconds: 60)
        #expect(try client.get("after-ping") == [1])
    }

    @Test func pingWithNothingListening() throws {
        let port = try freeLoopbackPort()
        let client = try MemcachedClient(configuration: .init(servers: ["127.0.0.1:\(port)"]))
        let (result, seconds) = timed { client.ping() }
        #expect((try? result.get()) == false)
        #expect(seconds < 1)
    }
}
