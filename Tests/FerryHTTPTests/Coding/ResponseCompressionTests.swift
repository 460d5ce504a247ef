import FerryHTTP
import FerryHTTPTestSupport
import Foundation
import Testing

/// Compressed answers on the wire, decoded with zlib directly (not the server's code).
@Suite("Server: response compression")
struct ResponseCompressionTests {
    private func get(
        _ server: HTTPServer, _ path: String, _ headers: [(String, String)] = [], method: String = "GET"
    ) throws -> TestHTTPClient.Response {
        let client = try TestHTTPClient(connectingTo: server.port)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: x\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try client.send(head + "\r\n")
        return try client.readResponse(head: method == "HEAD")
    }

    @Test func gzipAndDeflateDecodeToTheIdentityBody() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let identity = try get(server, "/json")
        #expect(identity.header("Content-Encoding") == nil)
        #expect(identity.body == CodingRoutes.document)
        #expect(identity.header("Vary") == "Accept-Encoding")
        for coding in ["gzip", "deflate"] {
            let coded = try get(server, "/json", [("Accept-Encoding", coding)])
            #expect(coded.status == 200)
            #expect(coded.header("Content-Encoding") == coding)
            #expect(coded.header("Vary") == "Accept-Encoding")
            #expect(coded.header("Content-Length") == String(coded.body.count))
            #expect(coded.body.count < identity.body.count / 3, "\(coding): \(coded.body.count) bytes")
            #expect(try ZlibCodec.decode(coded.body, coding: coding) == identity.body)
        }
    }

    /// RFC 9110 §12.5.3: the highest non-zero qvalue wins, gzip on a tie; identity stays
    /// acceptable unless excluded; when everything is excluded the answer is identity
    /// anyway (the server disregards the field rather than answer 406).
    @Test(arguments: [
        ("gzip", "gzip"), ("GZIP", "gzip"), ("x-gzip", "gzip"), ("deflate", "deflate"),
        ("gzip, deflate", "gzip"), ("deflate, gzip", "gzip"), ("gzip;q=0.5, deflate;q=0.8", "deflate"),
        ("gzip;q=0", "identity"), ("gzip;q=0, deflate", "deflate"), ("gzip; q=0.001", "gzip"),
        ("*", "gzip"), ("*;q=0", "identity"), ("*, gzip;q=0", "deflate"),
        ("identity;q=0", "identity"), ("identity;q=0, gzip;q=0, *;q=0", "identity"),
        ("gzip;q=0.5, identity", "identity"), ("gzip, identity;q=0.5", "gzip"),
        ("br", "identity"), ("", "identity"), ("gzip;q=2", "identity"), ("gzip;q=bad", "identity"),
    ])
    func qvaluesChooseTheCoding(field: String, expected: String) throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let response = try get(server, "/json", [("Accept-Encoding", field)])
        #expect(response.status == 200)
        #expect(response.header("Content-Encoding") ?? "identity" == expected, "Accept-Encoding: \(field)")
        #expect(response.header("Vary") == "Accept-Encoding")
        let body = expected == "identity" ? response.body : try ZlibCodec.decode(response.body, coding: expected)
        #expect(body == CodingRoutes.document)
    }

    @Test func smallTextAndLevelZeroAnswersStayIdentity() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let small = try get(server, "/small", [("Accept-Encoding", "gzip")])
        #expect(small.header("Content-Encoding") == nil, "under the 1 KiB minimum")
        #expect(small.header("Vary") == "Accept-Encoding", "it still depends on the field once it grows")
        let text = try get(server, "/text", [("Accept-Encoding", "gzip")])
        #expect(text.header("Content-Encoding") == nil, "only JSON types are compressed")
        #expect(text.header("Vary") == nil)
        let problem = try get(server, "/problem", [("Accept-Encoding", "gzip")])
        #expect(problem.status == 422)
        #expect(problem.header("Content-Encoding") == "gzip", "problem+json is JSON")
        let decoded = try JSONSerialization.jsonObject(with: Data(ZlibCodec.decode(problem.body))) as? [String: Any]
        #expect(decoded?["code"] as? String == "validation_failed")

        let off = try TestHTTPServer.start(responder: CodingRoutes.router(), compression: HTTPCompression(level: 0))
        defer { off.shutdown() }
        let plain = try get(off, "/json", [("Accept-Encoding", "gzip")])
        #expect(plain.header("Content-Encoding") == nil)
        #expect(plain.body == CodingRoutes.document)
    }

    @Test func strongETagsDifferPerEncodingAnd304HoldsAcrossThem() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        #expect(try get(server, "/json").header("ETag") == #""v1""#)
        #expect(try get(server, "/json", [("Accept-Encoding", "gzip")]).header("ETag") == #""v1-gzip""#)
        #expect(try get(server, "/json", [("Accept-Encoding", "deflate")]).header("ETag") == #""v1-deflate""#)
        // Each tag, sent with each encoding accepted, names the same content: 304, no body.
        for tag in [#""v1""#, #""v1-gzip""#, #""v1-deflate""#, #"W/"v1-gzip""#, #""v0", "v1-gzip""#] {
            for accept in ["gzip", "identity", "deflate"] {
                let client = try TestHTTPClient(connectingTo: server.port)
                try client.send(
                    "GET /json HTTP/1.1\r\nHost: x\r\nAccept-Encoding: \(accept)\r\nIf-None-Match: \(tag)\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n"
                )
                let response = try client.readResponse()
                #expect(response.status == 304, "If-None-Match: \(tag), Accept-Encoding: \(accept)")
                #expect(response.header("Content-Length") == nil && response.header("Content-Encoding") == nil)
                #expect(response.header("Vary") == "Accept-Encoding")
                // The 304 names the content in the form the client holds it.
                let held = tag.contains("-gzip") ? #""v1-gzip""# : tag.contains("-deflate") ? #""v1-deflate""# : #""v1""#
                #expect(response.header("ETag") == held, "If-None-Match: \(tag)")
                // No body went out: the next answer on the connection starts right after the head.
                #expect(try client.readResponse().text == #"{"status":"ok"}"#)
            }
        }
        #expect(try get(server, "/json", [("Accept-Encoding", "gzip"), ("If-None-Match", #""v2-gzip""#)]).status == 200)
        // If-Match takes the tag of either encoding too.
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("PATCH /json HTTP/1.1\r\nHost: x\r\nIf-Match: \"v1-gzip\"\r\nContent-Length: 0\r\n\r\n")
        #expect(try client.readResponse().status == 200)
    }

    @Test func headSendsTheHeadOfTheCodedAnswerAndNoBody() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let coded = try get(server, "/json", [("Accept-Encoding", "gzip")])
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("HEAD /json HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Encoding") == "gzip")
        #expect(head.header("Content-Length") == String(coded.body.count))
        #expect(head.header("ETag") == #""v1-gzip""#)
        #expect(try client.readResponse().text == #"{"status":"ok"}"#, "no body after the HEAD answer")
    }

    @Test func aStreamedAnswerIsCompressedAsItStreams() throws {
        let server = try TestHTTPServer.start(responder: CodingRoutes.router())
        defer { server.shutdown() }
        let plain = try get(server, "/stream")
        #expect(plain.header("Transfer-Encoding") == "chunked")
        let plainRows = try JSONSerialization.jsonObject(with: Data(plain.body)) as? [[String: Int]]
        #expect(plainRows?.count == 2000)
        let coded = try get(server, "/stream", [("Accept-Encoding", "gzip")])
        #expect(coded.header("Transfer-Encoding") == "chunked")
        #expect(coded.header("Content-Encoding") == "gzip")
        #expect(coded.header("Vary") == "Accept-Encoding")
        #expect(coded.body.count < plain.body.count / 3)
        #expect(try ZlibCodec.decode(coded.body) == plain.body, "complete: every row, and the gzip trailer")
    }
}
