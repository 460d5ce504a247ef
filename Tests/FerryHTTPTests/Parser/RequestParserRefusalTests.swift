import Testing

@testable import FerryHTTP

/// One input the parser must refuse, and the status it must answer.
struct Refusal: Sendable, CustomTestStringConvertible {
    var name: String
    var input: [UInt8]
    var status: Int
    var maxBody: Int = HTTPLimits().maxBodyBytes

    init(_ name: String, _ input: String, _ status: Int, maxBody: Int = HTTPLimits().maxBodyBytes) {
        self.name = name
        self.input = wire(input)
        self.status = status
        self.maxBody = maxBody
    }

    var testDescription: String { "\(status) \(name)" }

    var reason: HTTPError.Reason {
        [
            400: .malformed, 413: .bodyTooLarge, 414: .targetTooLong, 431: .headersTooLarge,
            501: .transferCodingNotImplemented, 505: .versionNotSupported,
        ][status]!
    }
}

private let get = "GET / HTTP/1.1\r\nHost: x\r\n"
private let post = "POST /p HTTP/1.1\r\nHost: x\r\n"
private let chunked = post + "Transfer-Encoding: chunked\r\n\r\n"

let refusals: [Refusal] = [
    // Sizes.
    Refusal("request line over limit", "GET /" + String(repeating: "a", count: 8200) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    Refusal("header section over limit", get + "X-Big: " + String(repeating: "a", count: 17_000) + "\r\n\r\n", 431),
    Refusal("101 header fields", get + (1...100).map { "X-\($0): v\r\n" }.joined() + "\r\n", 431),
    Refusal("Content-Length over limit", post + "Content-Length: 10485761\r\n\r\n", 413),
    Refusal("chunked body past limit", chunked + "8\r\n12345678\r\n3\r\nabc\r\n0\r\n\r\n", 413, maxBody: 10),
    Refusal("one huge chunk", chunked + "FFFFFFFFFFFFFFFF\r\n", 413),
    Refusal("trailers past header limit", chunked + "0\r\nX-T: " + String(repeating: "t", count: 17_000) + "\r\n\r\n", 431),
    // Framing.
    Refusal("Content-Length and Transfer-Encoding", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    Refusal("Transfer-Encoding then Content-Length", post + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400),
    Refusal("Content-Length +5", post + "Content-Length: +5\r\n\r\nhello", 400),
    Refusal("Content-Length -1", post + "Content-Length: -1\r\n\r\n", 400),
    Refusal("Content-Length 5, 6", post + "Content-Length: 5, 6\r\n\r\nhello!", 400),
    Refusal("two different Content-Length fields", post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
    Refusal("Content-Length overflow", post + "Content-Length: 99999999999999999999\r\n\r\n", 400),
    Refusal("Content-Length empty", post + "Content-Length: \r\n\r\n", 400),
    Refusal("Content-Length hex", post + "Content-Length: 0x5\r\n\r\nhello", 400),
    Refusal("Content-Length inner space", post + "Content-Length: 1 0\r\n\r\n", 400),
    Refusal("Content-Length trailing comma", post + "Content-Length: 5,\r\n\r\nhello", 400),
    Refusal("chunked twice", post + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400),
    Refusal("chunked twice in two fields", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    Refusal("chunked not last", post + "Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400),
    Refusal("empty Transfer-Encoding", post + "Transfer-Encoding: \r\n\r\n", 400),
    Refusal("Transfer-Encoding in HTTP/1.0", "POST /p HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    Refusal("gzip", post + "Transfer-Encoding: gzip\r\n\r\n", 501),
    Refusal("gzip then chunked", post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    Refusal("identity", post + "Transfer-Encoding: identity\r\n\r\n", 501),
    Refusal("chunked with parameter", post + "Transfer-Encoding: chunked;q=1\r\n\r\n", 501),
    // Chunks.
    Refusal("chunk size with minus", chunked + "-5\r\nhello\r\n0\r\n\r\n", 400),
    Refusal("chunk size with plus", chunked + "+5\r\nhello\r\n0\r\n\r\n", 400),
    Refusal("chunk size junk", chunked + "zz\r\n", 400),
    Refusal("chunk size 0x prefix", chunked + "0x5\r\nhello\r\n0\r\n\r\n", 400),
    Refusal("chunk size empty", chunked + "\r\nhello\r\n0\r\n\r\n", 400),
    Refusal("chunk size 17 digits", chunked + "00000000000000005\r\nhello\r\n0\r\n\r\n", 400),
    Refusal("chunk size trailing space", chunked + "5 \r\nhello\r\n0\r\n\r\n", 400),
    Refusal("chunk extension with control char", chunked + "5;a=\u{1}\r\nhello\r\n0\r\n\r\n", 400),
    // chunk-ext grammar (RFC 9112 §7.1.1), the cases llhttp refuses.
    Refusal("chunk extension without a name", chunked + "2;\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension name then nothing", chunked + "2;=v\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension with an empty value", chunked + "2;a=\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension with an unclosed quote", chunked + "2;a=\"b\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension quote escaping its end", chunked + "2;a=\"b\\\"\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension with junk after a value", chunked + "2;a=b c\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension with junk after a quoted value", chunked + "2;a=\"b\"c\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension with a separator in its name", chunked + "2;a@b\r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension ending in a semicolon", chunked + "2;a;\r\nhi\r\n0\r\n\r\n", 400),
    // Found by bench/fuzz (chunked): trailing whitespace was refused after a value but taken after a name.
    Refusal("chunk extension name then trailing whitespace", chunked + "2;a \r\nhi\r\n0\r\n\r\n", 400),
    Refusal("chunk extension value then trailing whitespace", chunked + "0;1=\t0\t\r\n\r\n", 400),
    Refusal("chunk extension too long", chunked + "5;" + String(repeating: "e", count: 5000) + "\r\nhello\r\n0\r\n\r\n", 400),
    Refusal(
        "chunk extensions over their total",
        chunked + String(repeating: "1;" + String(repeating: "e", count: 4000) + "\r\nz\r\n", count: 17) + "0\r\n\r\n", 400),
    Refusal("chunk size bare LF", chunked + "5\nhello\r\n0\r\n\r\n", 400),
    Refusal("junk after chunk data", chunked + "5\r\nhelloX\r\n0\r\n\r\n", 400),
    Refusal("bare LF after chunk data", chunked + "5\r\nhello\n0\r\n\r\n", 400),
    Refusal("bare CR after chunk data", chunked + "5\r\nhello\r0\r\n\r\n", 400),
    Refusal("obs-fold in trailers", chunked + "0\r\nX-T: a\r\n b\r\n\r\n", 400),
    // Header syntax.
    Refusal("space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
    Refusal("tab before colon", "GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", 400),
    Refusal("obs-fold", get + "X-A: b\r\n c\r\n\r\n", 400),
    Refusal("obs-fold with tab", get + "X-A: b\r\n\tc\r\n\r\n", 400),
    Refusal("whitespace line right after request line", "GET / HTTP/1.1\r\n Host: x\r\n\r\n", 400),
    Refusal("no colon", get + "X-A\r\n\r\n", 400),
    Refusal("empty name", get + ": v\r\n\r\n", 400),
    Refusal("bare CR in value", get + "X-A: b\rc\r\n\r\n", 400),
    Refusal("bare CR ending a header line", get + "X-A: b\rX-B: c\r\n\r\n", 400),
    Refusal("bare CR in request line", "GET / HTTP/1.1\rHost: x\r\n\r\n", 400),
    Refusal("bare LF line endings", "GET / HTTP/1.1\nHost: x\n\n", 400),
    Refusal("bare LF ending a header", get + "X-A: b\n\r\n", 400),
    Refusal("bare LF ending the head", get + "\n", 400),
    Refusal("NUL in value", get + "X-A: a\u{0}b\r\n\r\n", 400),
    Refusal("control char in value", get + "X-A: a\u{1}b\r\n\r\n", 400),
    Refusal("DEL in value", get + "X-A: a\u{7F}b\r\n\r\n", 400),
    Refusal("NUL in name", get + "X-\u{0}A: b\r\n\r\n", 400),
    Refusal("control char in name", get + "X-\u{1B}A: b\r\n\r\n", 400),
    Refusal("non-token name", get + "X(A): b\r\n\r\n", 400),
    // Host.
    Refusal("HTTP/1.1 without Host", "GET / HTTP/1.1\r\n\r\n", 400),
    Refusal("two Host fields", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    Refusal("two Host fields in HTTP/1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400),
    // Versions.
    Refusal("HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    Refusal("HTTP/3.0", "GET / HTTP/3.0\r\nHost: x\r\n\r\n", 505),
    Refusal("HTTP/0.9", "GET / HTTP/0.9\r\nHost: x\r\n\r\n", 505),
    Refusal("HTTP/1.10", "GET / HTTP/1.10\r\nHost: x\r\n\r\n", 400),
    Refusal("HTTP/1", "GET / HTTP/1\r\nHost: x\r\n\r\n", 400),
    Refusal("lower-case http/1.1", "GET / http/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("no version", "GET /\r\nHost: x\r\n\r\n", 400),
    Refusal("version with trailing space", "GET / HTTP/1.1 \r\nHost: x\r\n\r\n", 400),
    // Request line.
    Refusal("bad method token", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("leading space", " GET / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("double space", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("tab separator", "GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("space in target", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("control char in target", "GET /a\u{1}b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("DEL in target", "GET /a\u{7F}b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("non-ASCII in target", "GET /é HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("fragment in target", "GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("relative target", "GET a/b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("asterisk with GET", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("CONNECT with a path", "CONNECT / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("CONNECT without port", "CONNECT example.com HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("ftp absolute-form", "GET ftp://h/p HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("absolute-form without host", "GET http:///p HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("absolute-form with userinfo", "GET http://u:p@h/p HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    Refusal("too many empty lines first", String(repeating: "\r\n", count: 9) + get + "\r\n", 400),
    // Target decoding.
    Refusal("invalid escape in path", "GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("truncated escape in path", "GET /a%2 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("encoded NUL in path", "GET /a%00b HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("encoded LF in path", "GET /a%0Ab HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("invalid UTF-8 in path", "GET /a%FF HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("invalid escape in query", "GET /a?x=%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("truncated escape in query", "GET /a?x=1% HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    Refusal("encoded NUL in query", "GET /a?x=%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400),
]

@Suite("RequestParser refusals")
struct RequestParserRefusalTests {
    @Test("refused with the exact status, whole and byte by byte", arguments: refusals, Feed.allCases)
    func refused(_ refusal: Refusal, feed: Feed) {
        var (outcomes, parser) = parse(refusal.input, feed: feed, limits: limits(maxBody: refusal.maxBody))
        let expected = Outcome.error(status: refusal.status, reason: refusal.reason, close: true)
        #expect(outcomes == [expected])
        // Dead: the same error again, whatever comes next.
        parser.append(wire("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        var again: [Outcome] = []
        drain(&parser, into: &again)
        #expect(again == [expected])
        #expect(!parser.hasPartialRequest)
    }

    @Test("refusal names are unique, so a failure points at one input")
    func refusalNamesAreUnique() {
        #expect(Set(refusals.map(\.name)).count == refusals.count)
    }
}
