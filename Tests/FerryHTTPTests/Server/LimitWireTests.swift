import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Testing

/// Refused input: each answer is checked, then either a canary on the same
/// connection gets exactly one correct answer, or the connection is closed
/// with nothing more (no smuggled second response).
@Suite("Server: limits and smuggling")
struct LimitWireTests {
    private func expectClosedAfter(_ client: TestHTTPClient, status: Int, reason: String? = nil) throws {
        let response = try client.readResponse()
        #expect(response.status == status)
        #expect(response.header("Connection") == "close")
        if let reason {
            let body = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(body?["reason"] as? String == reason)
        }
        #expect(client.isClosedWithNothingMore())
    }

    @Test func longRequestLineIs414() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /" + String(repeating: "a", count: 2000) + " HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        try expectClosedAfter(client, status: 414)
    }

    @Test func largeHeaderSectionIs431() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 3000) + "\r\n\r\n")
        try expectClosedAfter(client, status: 431)
    }

    @Test func oversizedBodyIs413BeforeTheBodyIsRead() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        // Only the head is sent: the answer must come without the body.
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
        try expectClosedAfter(client, status: 413)
    }

    @Test func connectionCapAnswers503() throws {
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.maxConnections = 2 }, ioThreads: 1)
        defer { server.shutdown() }
        let first = try TestHTTPClient(connectingTo: server.port)
        let second = try TestHTTPClient(connectingTo: server.port)
        try first.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try first.readResponse().status == 200)
        try second.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try second.readResponse().status == 200)
        let third = try TestHTTPClient(connectingTo: server.port)
        try third.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        try expectClosedAfter(third, status: 503, reason: "tooManyConnections")
        // The first two are still served.
        try first.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try first.readResponse().text == "ok")
    }

    @Test func contentLengthWithTransferEncodingIsRefusedAndClosed() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        try expectClosedAfter(client, status: 400)
    }

    @Test func duplicateContentLengthIsRefusedAndClosed() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 30\r\n\r\n"
                + "helloGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        try expectClosedAfter(client, status: 400)
    }

    @Test func requestInsideAChunkedBodyIsNotExecuted() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        // The chunk's data looks like a request; it must stay body.
        let smuggled = "GET /id HTTP/1.1\r\nHost: x\r\n\r\n"
        let hex = String(smuggled.utf8.count, radix: 16)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\(hex)\r\n\(smuggled)\r\n0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == smuggled)
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
        #expect(client.leftover == 0)
    }
}
