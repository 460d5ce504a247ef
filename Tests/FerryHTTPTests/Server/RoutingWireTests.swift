import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Testing

@Suite("Server: routing, problems, request ids")
struct RoutingWireTests {
    private func problem(_ response: TestHTTPClient.Response) throws -> [String: Any] {
        #expect(response.header("Content-Type") == "application/problem+json")
        return try #require(JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func notFoundIsProblemJSON() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 404)
        let body = try problem(response)
        #expect(body["type"] as? String == "about:blank")
        #expect(body["title"] as? String == "Not Found")
        #expect(body["status"] as? Int == 404)
        #expect(body["reason"] as? String == "routeNotFound")
        #expect(body["detail"] is String)
        try client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func wrongMethodIs405WithAllow() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("PUT /v1/sets/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 405)
        #expect(response.header("Allow") == "DELETE, GET, HEAD")
        #expect(try problem(response)["reason"] as? String == "methodNotAllowed")
    }

    /// A handler's header value can never split the response: CR, LF and NUL go out as spaces.
    @Test func headerValuesCannotSplitTheResponse() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /unsafe-header HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.header("X-Echo") == "a  Injected: yes z ")
        #expect(response.header("Injected") == nil)
        #expect(response.text == "ok")
        #expect(try client.readResponse().text == "ok")
    }

    @Test func literalSegmentsWinAndParametersReachTheHandler() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /v1/users/me HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/users/42 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "literal /v1/users/me")
        #expect(try client.readResponse().text == "param users 42 /v1/:resource/:id")
    }

    @Test func throwingHandlerGives500AndHTTPErrorItsStatus() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /throws HTTP/1.1\r\nHost: x\r\n\r\n")
        let failed = try client.readResponse()
        #expect(failed.status == 500)
        #expect(try problem(failed)["reason"] as? String == "handlerFailed")
        try client.send("GET /conflict HTTP/1.1\r\nHost: x\r\n\r\n")
        let conflict = try client.readResponse()
        #expect(conflict.status == 409)
        #expect(try problem(conflict)["reason"] as? String == "other")
        #expect(try problem(conflict)["detail"] as? String == "stale")
    }

    @Test func requestIDIsEchoedOrGenerated() throws {
        let server = try TestHTTPServer.start()
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /id HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc-123.x\r\n\r\n")
        let echoed = try client.readResponse()
        #expect(echoed.header("X-Request-Id") == "abc-123.x")
        #expect(echoed.text == "abc-123.x")
        try client.send("GET /id HTTP/1.1\r\nHost: x\r\nX-Request-Id: bad id<script>\r\n\r\n")
        let generated = try client.readResponse()
        let id = try #require(generated.header("X-Request-Id"))
        #expect(id.count == 20)
        #expect(id != "bad id<script>")
        #expect(generated.text == id)
    }
}
