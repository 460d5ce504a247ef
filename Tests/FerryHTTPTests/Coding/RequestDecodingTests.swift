import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Glibc
import Testing

/// Coded request bodies: decoded before the handler, refused when they cannot be.
@Suite("Server: request body decoding")
struct RequestDecodingTests {
    private func post(_ client: TestHTTPClient, _ body: [UInt8], encoding: String?) throws -> TestHTTPClient.Response {
        var head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n"
        if let encoding { head += "Content-Encoding: \(encoding)\r\n" }
        try client.send(Array((head + "\r\n").utf8) + body)
        return try client.readResponse()
    }

    /// The refusal's reason, as TestHTTPServer's refusal writes it.
    private func reason(_ response: TestHTTPClient.Response) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reason"] as? String
    }

    @Test func gzipAndDeflateBodiesReachTheHandlerDecoded() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        let plain = Array(#"[{"word":"a"},{"word":"b"}]"#.utf8)
        for (field, coded) in [
            ("gzip", ZlibCodec.encode(plain)), ("x-gzip", ZlibCodec.encode(plain)), ("deflate", ZlibCodec.encode(plain, coding: "deflate")),
            ("identity", plain), ("gzip, identity", ZlibCodec.encode(plain)),
            // Concatenated gzip members are one body (RFC 1952 §2.2).
            ("gzip", ZlibCodec.encode(Array(plain[0..<10])) + ZlibCodec.encode(Array(plain[10...]))),
        ] {
            let response = try post(client, coded, encoding: field)
            #expect(response.status == 200, "Content-Encoding: \(field)")
            #expect(response.body == plain, "Content-Encoding: \(field)")
            #expect(response.header("X-Content-Encoding") == "-", "the handler sees a plain body")
            #expect(response.header("X-Content-Length") == String(plain.count))
        }
    }

    /// A gigabyte of zeros in about a megabyte of gzip: refused once the decoded body
    /// passes the limit, without the gigabyte ever being held.
    @Test func aGzipBombGets413AtTheLimit() throws {
        let limit = 2 << 20
        let server = try TestHTTPServer.start(limits: TestHTTPServer.limits { $0.maxBodyBytes = limit }, responder: CodingRoutes.router())
        defer { server.shutdown() }
        let bomb = ZlibCodec.zeros(count: 1 << 30)
        #expect(bomb.count < limit, "the compressed body itself is within the limit: \(bomb.count) bytes")
        let client = try TestHTTPClient(connectingTo: server.port)
        let before = Self.peakResidentBytes()
        let started = Date()
        let response = try post(client, bomb, encoding: "gzip")
        let seconds = Date().timeIntervalSince(started)
        #expect(response.status == 413)
        #expect(reason(response) == "bodyTooLarge")
        #expect(response.text.contains("decoded"), "refused while inflating, not by the parser: \(response.text)")
        #expect(seconds < 1, "refused after inflating the limit, not the gigabyte: \(seconds) s")
        let grown = Self.peakResidentBytes() - before
        #expect(grown < 256 << 20, "peak RSS grew \(grown >> 20) MiB; the plain body is 1024 MiB")
        // The body was read whole, so the connection goes on.
        #expect(try post(client, Array("{}".utf8), encoding: nil).status == 200)
        // Just at the limit is fine.
        #expect(try post(client, ZlibCodec.zeros(count: limit), encoding: "gzip").body.count == limit)
    }

    @Test func corruptAndTruncatedStreamsGet400() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        let good = ZlibCodec.encode(Array(String(repeating: "{\"a\":1}", count: 50).utf8))
        var flipped = good
        flipped[good.count / 2] ^= 0xFF
        for (name, body, field) in [
            ("not gzip", Array("{\"a\":1}".utf8), "gzip"), ("flipped byte", flipped, "gzip"),
            ("cut short", Array(good[0..<(good.count - 10)]), "gzip"), ("gzip sent as deflate", good, "deflate"),
            ("trailing garbage", good + [1, 2, 3], "gzip"),
        ] {
            let response = try post(client, body, encoding: field)
            #expect(response.status == 400, "\(name)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(reason(response) == "contentCodingCorrupt", "\(name)")
        }
    }

    @Test func anUnknownCodingGets415NamingTheKnownOnes() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let client = try TestHTTPClient(connectingTo: server.port)
        for field in ["br", "zstd", "gzip, br", "compress"] {
            let response = try post(client, Array("{}".utf8), encoding: field)
            #expect(response.status == 415, "Content-Encoding: \(field)")
            #expect(reason(response) == "contentCodingUnsupported")
            #expect(response.header("Accept-Encoding") == "gzip, deflate")
        }
        #expect(try post(client, Array("{}".utf8), encoding: nil).status == 200, "the connection goes on")
    }

    /// The process's peak resident set so far (ru_maxrss is in KiB on Linux).
    private static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }
}
