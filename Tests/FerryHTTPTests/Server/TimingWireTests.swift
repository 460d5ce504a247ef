import Dispatch
import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Testing

@Suite("Server: timeouts, workers, shutdown")
struct TimingWireTests {
    @Test func slowlorisIsCutOffWhileOthersAreServed() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.headerTimeoutSeconds = 0.6 })
        defer { server.shutdown() }
        let slow = try TestHTTPClient(connectingTo: server.port)
        let normal = try TestHTTPClient(connectingTo: server.port)
        let head = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: b\r\n".utf8)
        let start = MonotonicClock.now()
        var served = 0
        for byte in head {
            // Stop trickling once the server has answered the slow client.
            if slow.hasBytesWaiting() { break }
            try slow.send([byte])
            try normal.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try normal.readResponse().text == "ok")
            served += 1
            // A real sleep: the slow client trickling its head is what trips the header timeout.
            usleep(40_000)
        }
        let response = try slow.readResponse()
        let elapsed = MonotonicClock.now() - start
        #expect(response.status == 408)
        #expect(slow.isClosedWithNothingMore())
        #expect(elapsed > 0.5 && elapsed < 1.3)
        #expect(served >= 5)
    }

    /// A client that stops reading cannot hold a connection (and 32 MiB of
    /// response) forever: the stalled write is cut off.
    @Test func stalledWriteIsCutOff() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.writeTimeoutSeconds = 0.5 })
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /huge HTTP/1.1\r\nHost: x\r\n\r\n")
        try waitUntil("the server to accept the connection") { server.openConnections == 1 }
        let start = MonotonicClock.now()
        try waitUntil("the server to cut off the stalled connection", within: 5) { server.openConnections == 0 }
        let elapsed = MonotonicClock.now() - start
        #expect(elapsed > 0.3 && elapsed < 3)
        // Others are still served.
        let other = try TestHTTPClient(connectingTo: server.port)
        try other.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try other.readResponse().text == "ok")
    }

    @Test func idleConnectionIsClosed() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.idleTimeoutSeconds = 0.3 })
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
        let start = MonotonicClock.now()
        #expect(client.isClosedWithNothingMore())
        let waited = MonotonicClock.now() - start
        #expect(waited > 0.2 && waited < 2)
    }

    @Test func stalledBodyIsCutOff() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.bodyTimeoutSeconds = 0.3 })
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(client.isClosedWithNothingMore())
    }

    /// A body sent a byte at a time, never stalling, would hold its connection for as long
    /// as the client likes (100 bytes here: 10 s at this pace). Its pace cuts it off with a
    /// 408 once the grace (the body timeout, 1 s) has passed.
    @Test func aTricklingBodyIsCutOffByItsPace() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.bodyTimeoutSeconds = 1 })
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port, timeout: 15)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
        var sent = 0
        while sent < 100, !client.hasBytesWaiting() {
            guard (try? client.send("a")) != nil else { break }
            sent += 1
            usleep(100_000)
        }
        let response = try client.readResponse()
        #expect(response.status == 408, "after \(sent) bytes: \(response.text)")
        #expect(sent < 100, "cut off before the body was whole")
    }

    @Test func blockingHandlerDoesNotStallOtherConnections() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let port = server.port
        let slowResult = Background<Int> {
            guard let client = try? TestHTTPClient(connectingTo: port) else { return -1 }
            try? client.send("GET /slow?ms=1000 HTTP/1.1\r\nHost: x\r\n\r\n")
            return (try? client.readResponse().status) ?? -1
        }
        // Up to 10 s for the background client to get its request in: once, on a
        // machine still starting other services, 2 s was not enough.
        try waitUntil("the slow request to be in flight") { server.inFlightRequests == 1 }
        let start = MonotonicClock.now()
        let other = try TestHTTPClient(connectingTo: port)
        try other.send("GET /v1/sets/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try other.readResponse().status == 200)
        #expect(MonotonicClock.now() - start < 0.5)
        #expect(slowResult.wait() == 200)
    }

    @Test func gracefulShutdownFinishesInFlightRequest() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.shutdownGraceSeconds = 5 })
        let port = server.port
        let idle = try TestHTTPClient(connectingTo: port)
        try idle.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try idle.readResponse().status == 200)
        let slow = try TestHTTPClient(connectingTo: port)
        try slow.send("GET /slow?ms=1000 HTTP/1.1\r\nHost: x\r\n\r\n")
        try waitUntil("the slow request to be in flight") { server.inFlightRequests == 1 }
        #expect(server.openConnections == 2)
        let start = MonotonicClock.now()
        // Begun here, on this thread, so it surely precedes the handler's end.
        server.beginShutdown()
        // New connections are refused at once (a balancer moves on), not queued in the
        // backlog until the drain ends and then reset.
        #expect(throws: (any Error).self) { _ = try TestHTTPClient(connectingTo: port, timeout: 1) }
        let stopped = Background<Double> {
            server.waitUntilStopped()
            return MonotonicClock.now()
        }
        let response = try slow.readResponse()
        #expect(response.text == "slow done")
        #expect(response.header("Connection") == "close")
        #expect(slow.isClosedWithNothingMore())
        #expect(idle.isClosedWithNothingMore())
        let stoppedAt = try #require(stopped.wait())
        #expect(stoppedAt - start < 3)
        #expect(throws: (any Error).self) { _ = try TestHTTPClient(connectingTo: port, timeout: 1).readResponse() }
    }

    @Test func shutdownGraceCutsOffHandlersThatRunTooLong() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.shutdownGraceSeconds = 0.3 })
        let slow = try TestHTTPClient(connectingTo: server.port)
        try slow.send("GET /slow?ms=1500 HTTP/1.1\r\nHost: x\r\n\r\n")
        try waitUntil("the slow request to be in flight") { server.inFlightRequests == 1 }
        let start = MonotonicClock.now()
        server.shutdown()
        #expect(MonotonicClock.now() - start < 1.2)
        #expect(slow.isClosedWithNothingMore())
    }
}
