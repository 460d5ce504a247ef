import FerryHTTPTestSupport
import FerryTestSupport
import Testing
@testable import FerryMemcached

/// Outages: dead, restarted and hung servers. Every call must end within about the
/// configured timeouts (asserted < 1 s), and the client must heal by itself.
@Suite struct FailureTests {
    @Test func hungMemcachedDoesNotHoldCalls() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .init(servers: [server.address]))
        try client.set("k1", [1], ttlSeconds: 60)
        server.pause()
        defer { server.resume() }
        try expectBoundedUnavailability(client, keys: ["k1", "k2"])
    }

    @Test func silentListenerDoesNotHoldCalls() throws {
        let listener = try SilentListener()
        let client = try MemcachedClient(configuration: .init(servers: [listener.address]))
        try expectBoundedUnavailability(client, keys: ["k1", "k2"])
        // A large value fills the socket buffers and then waits for the peer to read.
        let (result, seconds) = timed { try client.set("big", randomBytes(900_000), ttlSeconds: 60) }
        #expect(kind(of: result) == .unavailable)
        #expect(seconds < 1, "large set took \(seconds) s")
    }

    /// A timed-out answer arriving late must not be read as the answer to the next call.
    @Test func lateAnswerIsNotMistakenForTheNextOne() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .init(servers: [server.address], poolSize: 1))
        try client.set("first", Array("one".utf8), ttlSeconds: 60)
        try client.set("second", Array("two".utf8), ttlSeconds: 60)
        server.pause()
        #expect(kind(of: Result { try client.get("first") }) == .unavailable)
        server.resume()
        pause(seconds: 0.05)  // let the late answer reach the socket
        #expect(try client.get("second") == Array("two".utf8))
        #expect(try client.getMany(["first", "second"]).count == 2)
    }

    @Test func stoppedServerFailsFastAndRecoversAfterRestart() throws {
        let server = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .init(servers: [server.address], retryTimeoutSeconds: 1))
        try client.set("k", [1], ttlSeconds: 60)
        server.kill()
        for _ in 0..<5 {
            let (result, seconds) = timed { try client.get("k") }
            #expect(kind(of: result) == .unavailable)
            #expect(seconds < 0.5)
        }
        try server.restart()
        // Same client: within the retry timeout plus a bit, calls work again.
        let healed = eventually(within: 4) {
            (try? client.set("k", [2], ttlSeconds: 60)) != nil
        }
        #expect(healed)
        #expect(try client.get("k") == [2])
        #expect(client.ping())
    }

    /// One of two servers dies: keys on the live one keep working throughout; keys of
    /// the dead one are rerouted to the live one (their old values are lost: misses).
    @Test func oneOfTwoServersStopped() throws {
        let a = try MemcachedProcess()
        let b = try MemcachedProcess()
        let client = try MemcachedClient(
            configuration: .init(
                servers: [a.address, b.address], retryTimeoutSeconds: 1))
        let keys = (0..<40).map { "k\($0)" }
        for key in keys { try client.set(key, Array(key.utf8), ttlSeconds: 60) }
        let onA = try keys.filter { try client.server(forKey: $0) == a.address }
        let onB = keys.filter { !onA.contains($0) }
        #expect(!onA.isEmpty && !onB.isEmpty)

        b.kill()
        for _ in 0..<3 {
            for key in keys {
                let (result, seconds) = timed { try client.get(key) }
                #expect(seconds < 1)
                switch result {
                case .success(let value):
                    if onA.contains(key) { #expect(value == Array(key.utf8)) } else { #expect(value == nil) }
                case .failure(let error):
                    // Rerouting is transparent: callers never see the failover.
                    Issue.record("get \(key) failed during failover: \(error)")
                }
            }
        }
        for key in onB { try client.set(key, [9], ttlSeconds: 60) }
        let onlyA = try MemcachedClient(configuration: .init(servers: [a.address]))
        #expect(try onlyA.getMany(onB).count == onB.count, "B's keys now live on A")
        #expect(try client.getMany(keys).count == keys.count)
        #expect(client.pingEach().map(\.isUp) == [true, false])
        #expect(!client.ping())

        // B comes back (empty); after the retry timeout its keys go to it again.
        try b.restart()
        let onlyB = try MemcachedClient(configuration: .init(servers: [b.address]))
        let returned = eventually(within: 5) {
            guard let key = onB.first, (try? client.set(key, [3], ttlSeconds: 60)) != nil else { return false }
            return (try? onlyB.get(key)) == [3]
        }
        #expect(returned)
        #expect(client.ping())
    }

    @Test func multiGetWithAHungServerIsUnavailableNotAMiss() throws {
        let a = try MemcachedProcess()
        let b = try MemcachedProcess()
        let client = try MemcachedClient(configuration: .init(servers: [a.address, b.address]))
        let keys = (0..<20).map { "m\($0)" }
        for key in keys { try client.set(key, [1], ttlSeconds: 60) }
        b.pause()
        defer { b.resume() }
        let (result, seconds) = timed { try client.getMany(keys) }
        #expect(kind(of: result) == .unavailable)
        #expect(seconds < 1)
        let (statuses, pingSeconds) = timed { client.pingEach() }
        #expect((try? statuses.get())?.map(\.isUp) == [true, false])
        #expect(pingSeconds < 1)
    }
}

/// Each kind of call against an unresponsive server: `.unavailable`, in under a second.
private func expectBoundedUnavailability(_ client: MemcachedClient, keys: [String]) throws {
    let calls: [(String, () throws -> Void)] = [
        ("get", { _ = try client.get(keys[0]) }),
        ("set", { try client.set(keys[1], [2], ttlSeconds: 60) }),
        ("delete", { _ = try client.delete(keys[0]) }),
        ("getMany", { _ = try client.getMany(keys) }),
        ("get again", { _ = try client.get(keys[1]) }),
    ]
    for (name, call) in calls {
        let (result, seconds) = timed { try call() }
        #expect(kind(of: result) == .unavailable, "\(name) gave \(result)")
        #expect(seconds < 1, "\(name) took \(seconds) s")
    }
    let (pinged, seconds) = timed { client.ping() }
    #expect((try? pinged.get()) == false)
    #expect(seconds < 1)
}
