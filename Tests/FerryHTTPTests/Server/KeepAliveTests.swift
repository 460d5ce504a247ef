import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Logging
import Testing

@Suite("Server: keep-alive, pipelining, framing")
struct KeepAliveTests {
    @Test func keepAliveServesManyRequestsOnOneConnection() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        for _ in 0..<3 {
            try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "ok")
            #expect(response.header("Content-Length") == "2")
            #expect(response.header("Server") == "test-server")
            #expect(response.header("Date")?.hasSuffix(" GMT") == true)
            #expect(response.header("Connection") == nil)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        // The first goes to a worker and is slow; the others are inline: order must hold.
        try client.send(
            "GET /slow?ms=200 HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/sets/7 HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "slow done")
        #expect(try client.readResponse().text == "param sets 7 /v1/:resource/:id")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func chunkedRequestBodyIsDechunked() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "hello world")
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func expectContinueGetsInterimResponseThenAnswer() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        try client.send("ping")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "ping")
    }

    @Test func headHasHeadersOnlyWithGetsLength() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("HEAD /big HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse(head: true)
        #expect(response.status == 200)
        #expect(response.header("Content-Length") == "100000")
        // The canary proves no body bytes followed the HEAD response.
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func largeAndStreamedBodiesArrive() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().body == [UInt8](repeating: 65, count: 100_000))
        let streamed = try client.readResponse()
        #expect(streamed.header("Transfer-Encoding") == "chunked")
        #expect(streamed.text == "part0;part1;part2;part3;part4;")
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
    }

    /// The loop watches a socket for writability only while a write is blocked: a response
    /// larger than the socket buffers, read late, must still finish, and the connection must
    /// then go back to reading (here a pipelined request and a later one).
    @Test func blockedWriteResumesWhenTheClientReads() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /huge HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        // A real sleep: reading late is the point, and nothing tells the test that the
        // server's write has blocked (32 MiB cannot fit in the loopback socket buffers).
        usleep(300_000)
        let huge = try client.readResponse()
        #expect(huge.status == 200)
        #expect(huge.body.count == 32 << 20)
        #expect(huge.body.first == 66 && huge.body.last == 66)
        #expect(try client.readResponse().text == "ok")
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func connectionCloseIsHonoured() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.header("Connection") == "close")
        #expect(client.isClosedWithNothingMore())
    }

    @Test func http10KeepAliveAndIPv6() throws {
        let server = try TestHTTPServer.start(ioThreads: 1, workerThreads: 1, host: "::")
        defer { server.shutdown() }
        let v6 = try TestHTTPClient(connectingTo: server.port, host: "::1")
        try v6.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let response = try v6.readResponse()
        #expect(response.header("Connection") == "keep-alive")
        let v4 = try TestHTTPClient(connectingTo: server.port, host: "127.0.0.1")
        try v4.send("GET /healthz HTTP/1.0\r\n\r\n")
        #expect(try v4.readResponse().header("Connection") == "close")
        #expect(v4.isClosedWithNothingMore())
    }

    /// A client that sends its requests and half-closes at once gets every answer, then
    /// the close. (Whether the end of input reaches the server in the same epoll event as
    /// the requests, the case `Connection.sawHangup` is for, is up to the scheduler; on
    /// loopback it usually comes as an event of its own.)
    @Test func requestsThenAHalfCloseAreAnsweredAndTheConnectionCloses() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        for count in [1, 3] {
            let client = try TestHTTPClient(connectingTo: server.port)
            try client.send(String(repeating: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", count: count))
            client.shutdownWrite()
            for _ in 0..<count { #expect(try client.readResponse().text == "ok") }
            #expect(client.isClosedWithNothingMore(), "after \(count) request(s) and a half-close")
        }
    }
}
