import Ferry
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// `logging.format: json`: one JSON object per line, and one request line per
/// request carrying the request id, the user id and the route pattern.
@Suite struct JSONLogTests {
    final class Lines: Sendable {
        private let lines = Mutex<[[UInt8]]>([])
        func append(_ line: [UInt8]) { lines.withLock { $0.append(line) } }
        var all: [[UInt8]] { lines.withLock { $0 } }
    }

    private func objects(_ lines: Lines) throws -> [[String: Any]] {
        try lines.all.map { line in
            #expect(line.last == 10 && !line.dropLast().contains(10), "one object per line")
            return try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        }
    }

    @Test func requestLinesCarryRequestIDUserAndRoutePattern() throws {
        let lines = Lines()
        let logger = Logger(label: "ferry") { JSONLogHandler(label: $0, logLevel: .info) { lines.append($0) } }
        let server = try TestServer(logger: logger)
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let me = try client.request(
            "GET", "/v1/auth/me",
            headers: [
                ("Authorization", "Bearer \(alice.token)"), ("X-Request-Id", "trace-me-1"),
            ])
        #expect(me.status == 200)
        let anonymous = try client.request("GET", "/v1/auth/me", headers: [("X-Request-Id", "trace-anon-2")])
        #expect(anonymous.status == 401)
        _ = try client.request("GET", "/v1/terms/secret-id-123", headers: [("X-Request-Id", "trace-404-3")])

        let requests = try objects(lines).filter { $0["message"] as? String == "request" }
        let first = try #require(requests.first { $0["request_id"] as? String == "trace-me-1" })
        #expect(first["route"] as? String == "/v1/auth/me")
        #expect(first["user_id"] as? String == alice.id)
        #expect(first["status"] as? Int == 200)
        #expect(first["method"] as? String == "GET")
        #expect(first["level"] as? String == "info")
        #expect(first["logger"] as? String == "ferry")
        #expect((first["ts"] as? String)?.hasSuffix("Z") == true)
        #expect(first["duration_ms"] as? Double != nil, "duration_ms is a JSON number")
        #expect(first["bytes"] as? Int != nil, "bytes is the response body's size")
        let second = try #require(requests.first { $0["request_id"] as? String == "trace-anon-2" })
        #expect(second["user_id"] == nil)
        #expect(second["status"] as? Int == 401)
        let third = try #require(requests.first { $0["request_id"] as? String == "trace-404-3" })
        #expect(third["route"] as? String != "/v1/terms/secret-id-123")
        #expect(
            !lines.all.contains { String(decoding: $0, as: UTF8.self).contains("secret-id-123") },
            "raw paths stay out of the request line")
        #expect(requests.count == 3)
    }

    /// A request refused before it was whole (a parser's 400, 408, 413, 414, 431) reaches
    /// no responder: the server writes its line, under the id its answer carries.
    @Test func aRequestRefusedBeforeItWasWholeIsLogged() throws {
        let lines = Lines()
        let logger = Logger(label: "ferry") { JSONLogHandler(label: $0, logLevel: .info) { lines.append($0) } }
        let server = try TestServer(logger: logger)
        defer { server.stop() }
        let client = try TestHTTPClient(connectingTo: server.port)
        try client.send("GET /healthz HTTP/1.1\nHost: x\n\n")
        let answer = try client.readResponse()
        #expect(answer.status == 400)
        let id = try #require(answer.header("X-Request-Id"))
        let refused = try objects(lines).filter { $0["message"] as? String == "request refused" }
        let line = try #require(refused.first { $0["request_id"] as? String == id }, "\(refused)")
        #expect(line["level"] as? String == "info")
        #expect("\(line["status"] ?? "")" == "400")
        #expect((line["reason"] as? String)?.contains("bare LF") == true)
        #expect(line["remote"] as? String != nil)
    }

    @Test func messagesAndMetadataAreValidJSON() throws {
        let lines = Lines()
        var logger = Logger(label: "ferry.test") { JSONLogHandler(label: $0, logLevel: .debug) { lines.append($0) } }
        logger[metadataKey: "global"] = "g"
        logger.debug(
            "quote \" backslash \\ newline \n tab \t done",
            metadata: [
                "count": .stringConvertible(3), "flag": .stringConvertible(true), "list": .array(["a", "b"]),
                "nested": .dictionary(["k": "v"]), "message": "shadowed", "\u{1}ctl": "x",
            ])
        logger.trace("below the level")
        let objects = try objects(lines)
        #expect(objects.count == 1)
        let object = try #require(objects.first)
        #expect(object["message"] as? String == "quote \" backslash \\ newline \n tab \t done")
        #expect(object["meta.message"] as? String == "shadowed")
        #expect(object["count"] as? Int == 3)
        #expect(object["flag"] as? Bool == true)
        #expect(object["list"] as? [String] == ["a", "b"])
        #expect((object["nested"] as? [String: String])?["k"] == "v")
        #expect(object["global"] as? String == "g")
        #expect(object["level"] as? String == "debug")
    }

    @Test func aFieldLineIsTheSameObjectAsTheMetadataLine() throws {
        let fields = [
            LogField("bytes", .int(248)), LogField("duration_ms", .thousandths(1_250)),
            LogField("message", .string("shadowed")), LogField("route", .string("/v1/\"quoted\"\n")),
            LogField("status", .int(304)),
        ]
        var metadata = Logger.Metadata()
        for field in fields { metadata[field.key] = field.metadataValue }
        for global: Logger.MetadataValue? in [nil, "g"] {
            let lines = Lines()
            var logger = Logger(label: "ferry") { JSONLogHandler(label: $0, logLevel: .info) { lines.append($0) } }
            // Handler-wide metadata sends the fields the metadata way; both ways must agree.
            logger[metadataKey: "global"] = global
            FieldLogger(logger).log(level: .info, "request", fields: fields)
            logger.info("request", metadata: metadata)
            FieldLogger(logger).log(level: .debug, "below the level", fields: fields)
            let raw = lines.all
            // Byte for byte after the timestamp: `{"ts":"` and 24 characters of time.
            #expect(raw.count == 2 && raw[0].dropFirst(31) == raw[1].dropFirst(31))
            let objects = try objects(lines).map { $0.filter { $0.key != "ts" } }
            #expect(objects.count == 2)
            let first = try #require(objects.first)
            #expect(NSDictionary(dictionary: first).isEqual(to: try #require(objects.last)), "\(objects)")
            #expect(first["duration_ms"] as? Double == 1.25)
            #expect(first["status"] as? Int == 304)
            #expect(first["meta.message"] as? String == "shadowed")
            #expect(first["message"] as? String == "request")
            #expect(first["route"] as? String == "/v1/\"quoted\"\n")
            #expect(first["global"] as? String == global.map { "\($0)" })
        }
    }
}
