import Testing

@testable import FerryHTTP

@Suite("RequestParser bodies")
struct RequestParserBodyTests {
    @Test("POST with Content-Length", arguments: Feed.allCases)
    func contentLength(feed: Feed) throws {
        let r = try parseOne(
            "POST /v1/items HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"a\":\"\r\n\u{0}b\"}",
            feed: feed)
        #expect(r.method == "POST")
        #expect(r.body == wire("{\"a\":\"\r\n\u{0}b\"}"))
        #expect(r.headers["content-length"] == "12")
    }

    @Test(
        "equal repeated Content-Length values are accepted (RFC 9110 §8.6)",
        arguments: [
            "Content-Length: 5, 5\r\n", "Content-Length: 5\r\nContent-Length: 5\r\n", "Content-Length: 5,05\r\n",
            "Content-Length:\t5 \r\n",
        ])
    func repeatedContentLength(fields: String) throws {
        let r = try parseOne("POST / HTTP/1.1\r\nHost: h\r\n\(fields)\r\nhello", feed: .whole)
        #expect(r.body == wire("hello"))
    }

    @Test("Content-Length: 0 means no body")
    func zeroLength() throws {
        let r = try parseOne("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", feed: .whole)
        #expect(r.body.isEmpty)
    }

    @Test("a chunked body with extensions and trailers", arguments: Feed.allCases)
    func chunked(feed: Feed) throws {
        let input =
            "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n"
            + "6 ; a=\"q;x\" ;b\r\n world\r\n"
            + "000A\r\n0123456789\r\n"
            + "1;q=\"a\\\"b\\\\\";t=tok; u = \"\"\r\n!\r\n"
            + "0;last\r\n"
            + "X-Checksum: abc \r\nContent-Length: 99\r\nX-More:\r\n\r\n"
        let r = try parseOne(input, feed: feed)
        #expect(r.body == wire("hello world0123456789!"))
        // Trailers come after the head's fields; framing fields are dropped.
        #expect(
            r.headers
                == HTTPHeaders([
                    ("Host", "h"), ("Transfer-Encoding", "Chunked"), ("X-Checksum", "abc"), ("X-More", ""),
                ]))
        #expect(r.headers["Content-Length"] == nil)
    }

    @Test("an empty chunked body", arguments: Feed.allCases)
    func emptyChunked(feed: Feed) throws {
        let r = try parseOne("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", feed: feed)
        #expect(r.body.isEmpty)
    }

    @Test("empty list elements around chunked are ignored")
    func chunkedListElements() throws {
        let r = try parseOne("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked ,\r\n\r\n1\r\nz\r\n0\r\n\r\n", feed: .whole)
        #expect(r.body == wire("z"))
    }

    @Test("Expect: 100-continue, then the body", arguments: Feed.allCases)
    func expectContinue(feed: Feed) {
        let head = "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 5\r\n\r\n"
        var (outcomes, parser) = parse(wire(head), feed: feed)
        #expect(outcomes == [.expectContinue])
        #expect(parser.hasPartialRequest)
        #expect(!parser.isReadingHead)
        #expect(isNeedMore(parser.next()), "expectContinue comes only once")
        for byte in wire("hello") {
            parser.append([byte])
            drain(&parser, into: &outcomes)
        }
        #expect(outcomes.count == 2)
        guard case .request(let r) = outcomes.last else { Issue.record("no request"); return }
        #expect(r.body == wire("hello"))
        #expect(!parser.hasPartialRequest)
    }

    @Test("Expect: 100-continue with a chunked body")
    func expectContinueChunked() {
        let head = "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n"
        var (outcomes, parser) = parse(wire(head), feed: .whole)
        #expect(outcomes == [.expectContinue])
        parser.append(wire("3\r\nabc\r\n0\r\n\r\n"))
        drain(&parser, into: &outcomes)
        #expect(outcomes.count == 2)
    }

    @Test("no expectContinue when body bytes came with the head", arguments: ["h", "hello"])
    func expectContinueBodyAlreadyThere(body: String) {
        let head = "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
        let (outcomes, _) = parse(wire(head + body), feed: .whole)
        #expect(!outcomes.contains(.expectContinue))
        #expect(outcomes.count == (body.count == 5 ? 1 : 0))
    }

    @Test(
        "no expectContinue without a body or in HTTP/1.0",
        arguments: [
            "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
            "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
        ])
    func noExpectContinueWithoutBody(input: String) throws {
        let r = try parseOne(input, feed: .whole)
        #expect(r.body.isEmpty)
    }

    @Test("HTTP/1.0 ignores 100-continue")
    func http10IgnoresExpect() {
        let (outcomes, _) = parse(wire("PUT /x HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"), feed: .whole)
        #expect(outcomes.isEmpty)
    }

    @Test("413 instead of expectContinue when the declared body is too big", arguments: Feed.allCases)
    func expectContinueTooBig(feed: Feed) {
        let head = "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n"
        let (outcomes, _) = parse(wire(head), feed: feed, limits: limits(maxBody: 10))
        #expect(outcomes == [.error(status: 413, reason: .bodyTooLarge, close: true)])
    }

    @Test("body bytes are copied out as they arrive, not accumulated in the buffer")
    func bodyDoesNotAccumulate() {
        var parser = RequestParser(limits: HTTPLimits())
        parser.append(wire("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000\r\n\r\n"))
        #expect(isNeedMore(parser.next()))
        let chunk = [UInt8](repeating: 0x61, count: 10_000)
        for _ in 0..<99 {
            parser.append(chunk)
            #expect(isNeedMore(parser.next()))
            #expect(parser.buffer.count <= chunk.count)
        }
        parser.append(chunk)
        guard case .request(let r) = parser.next() else { Issue.record("no request"); return }
        #expect(r.body.count == 1_000_000)
    }
}

func isNeedMore(_ e: ParseEvent) -> Bool {
    if case .needMore = e { return true }
    return false
}
