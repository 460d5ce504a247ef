import Testing

@testable import FerryHTTP

@Suite("RequestParser heads")
struct RequestParserRequestTests {
    @Test("a plain GET", arguments: Feed.allCases)
    func plainGet(feed: Feed) throws {
        let r = try parseOne("GET /v1/items HTTP/1.1\r\nHost: example.com\r\nAccept:  application/json \t\r\n\r\n", feed: feed)
        #expect(r.method == "GET")
        #expect(r.target == "/v1/items")
        #expect(r.path == "/v1/items")
        #expect(r.rawQuery == nil)
        #expect(r.query.isEmpty)
        #expect(r.version == .http1_1)
        #expect(r.headers == HTTPHeaders([("Host", "example.com"), ("Accept", "application/json")]))
        #expect(r.body.isEmpty)
        #expect(r.keepAlive)
    }

    @Test("header names keep their spelling, compare case-insensitively; repeats are kept", arguments: Feed.allCases)
    func headerNames(feed: Feed) throws {
        let r = try parseOne("GET / HTTP/1.1\r\nhOST: h\r\nX-A: 1\r\nx-a: 2\r\nX-Empty:\r\n\r\n", feed: feed)
        #expect(r.headers.fields.map(\.name) == ["hOST", "X-A", "x-a", "X-Empty"])
        #expect(r.headers.values("X-A") == ["1", "2"])
        #expect(r.headers["x-empty"] == "")
        #expect(r.headers["host"] == "h")
    }

    @Test("obs-text in a value is kept", arguments: Feed.allCases)
    func obsText(feed: Feed) throws {
        let r = try parseOne("GET / HTTP/1.1\r\nHost: h\r\nX-Name: Zoë\r\n\r\n", feed: feed)
        #expect(r.headers["X-Name"] == "Zoë")
    }

    @Test("methods are case-sensitive tokens, kept as sent", arguments: ["get", "PATCH", "M-SEARCH", "X!#$%&'*+.^_`|~1"])
    func methodTokens(method: String) throws {
        let r = try parseOne("\(method) / HTTP/1.1\r\nHost: h\r\n\r\n", feed: .whole)
        #expect(r.method == method)
    }

    struct KeepAliveCase: Sendable, CustomTestStringConvertible {
        var version: String
        var connection: String?
        var keepAlive: Bool
        var testDescription: String { "\(version) Connection: \(connection ?? "-") -> \(keepAlive)" }
    }

    @Test(
        "keep-alive from version and Connection",
        arguments: [
            KeepAliveCase(version: "HTTP/1.1", connection: nil, keepAlive: true),
            KeepAliveCase(version: "HTTP/1.1", connection: "close", keepAlive: false),
            KeepAliveCase(version: "HTTP/1.1", connection: "Close", keepAlive: false),
            KeepAliveCase(version: "HTTP/1.1", connection: "keep-alive, CLOSE", keepAlive: false),
            KeepAliveCase(version: "HTTP/1.1", connection: "Upgrade ,close ", keepAlive: false),
            KeepAliveCase(version: "HTTP/1.1", connection: "keep-alive", keepAlive: true),
            KeepAliveCase(version: "HTTP/1.1", connection: "closed", keepAlive: true),
            KeepAliveCase(version: "HTTP/1.0", connection: nil, keepAlive: false),
            KeepAliveCase(version: "HTTP/1.0", connection: "keep-alive", keepAlive: true),
            KeepAliveCase(version: "HTTP/1.0", connection: "Keep-Alive", keepAlive: true),
            KeepAliveCase(version: "HTTP/1.0", connection: "foo, keep-alive", keepAlive: true),
            KeepAliveCase(version: "HTTP/1.0", connection: "keep-alive, close", keepAlive: false),
            KeepAliveCase(version: "HTTP/1.0", connection: "close", keepAlive: false),
            KeepAliveCase(version: "HTTP/1.2", connection: nil, keepAlive: true),
        ])
    func keepAlive(_ c: KeepAliveCase) throws {
        let connection = c.connection.map { "Connection: \($0)\r\n" } ?? ""
        let r = try parseOne("GET / \(c.version)\r\nHost: h\r\n\(connection)\r\n", feed: .whole)
        #expect(r.keepAlive == c.keepAlive)
    }

    @Test("Connection split over two fields still closes")
    func connectionInTwoFields() throws {
        let r = try parseOne("GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", feed: .whole)
        #expect(!r.keepAlive)
    }

    @Test("HTTP/1.0 needs no Host")
    func http10WithoutHost() throws {
        let r = try parseOne("GET /x HTTP/1.0\r\n\r\n", feed: .whole)
        #expect(r.version == .http1_0)
        #expect(r.headers.count == 0)
    }

    struct TargetCase: Sendable, CustomTestStringConvertible {
        var target: String
        var method = "GET"
        var path: String
        var rawQuery: String?
        var query: [String] = []
        var testDescription: String { "\(method) \(target)" }
    }

    @Test(
        "request-target forms and percent-decoding",
        arguments: [
            TargetCase(target: "/", path: "/"),
            TargetCase(target: "/a%20b/c%2Fd", path: "/a b/c/d"),
            TargetCase(target: "/caf%C3%A9", path: "/café"),
            TargetCase(target: "/a+b", path: "/a+b"),
            TargetCase(target: "/%41%62", path: "/Ab"),
            TargetCase(target: "/p?", path: "/p", rawQuery: ""),
            TargetCase(
                target: "/p?a=1&b=x+y&c=%26%3D&d&&e=", path: "/p", rawQuery: "a=1&b=x+y&c=%26%3D&d&&e=",
                query: ["a=1", "b=x y", "c=&=", "d=", "e="]),
            TargetCase(
                target: "/p?q=caf%C3%A9%20bar+baz&=v", path: "/p", rawQuery: "q=caf%C3%A9%20bar+baz&=v",
                query: ["q=café bar baz", "=v"]),
            TargetCase(target: "/p?a=b=c", path: "/p", rawQuery: "a=b=c", query: ["a=b=c"]),
            TargetCase(target: "/p?x=/?y", path: "/p", rawQuery: "x=/?y", query: ["x=/?y"]),
            TargetCase(target: "/p?nl=%0A", path: "/p", rawQuery: "nl=%0A", query: ["nl=\n"]),
            TargetCase(target: "http://example.com/a%20b?x=1", path: "/a b", rawQuery: "x=1", query: ["x=1"]),
            TargetCase(target: "http://example.com", path: "/"),
            TargetCase(target: "http://example.com:8080?q", path: "/", rawQuery: "q", query: ["q="]),
            TargetCase(target: "HTTPS://Example.com/v1/x", path: "/v1/x"),
            TargetCase(target: "*", method: "OPTIONS", path: "*"),
            TargetCase(target: "example.com:443", method: "CONNECT", path: "example.com:443"),
        ])
    func targets(_ c: TargetCase) throws {
        let r = try parseOne("\(c.method) \(c.target) HTTP/1.1\r\nHost: example.com\r\n\r\n", feed: .whole)
        #expect(r.target == c.target)
        #expect(r.path == c.path)
        #expect(r.rawQuery == c.rawQuery)
        #expect(r.query == c.query)
    }

    @Test("up to 8 empty lines before a request line are ignored", arguments: [1, 2, 8], Feed.allCases)
    func leadingEmptyLines(count: Int, feed: Feed) throws {
        let r = try parseOne(String(repeating: "\r\n", count: count) + "GET /x HTTP/1.1\r\nHost: h\r\n\r\n", feed: feed)
        #expect(r.path == "/x")
    }

    @Test("the empty-line allowance is per request")
    func emptyLinesBetweenRequests() {
        let one = "\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"
        let (outcomes, _) = parse(wire(one + one + one), feed: .whole)
        #expect(outcomes.count == 3)
        #expect(outcomes.allSatisfy { if case .request = $0 { true } else { false } })
    }
}
