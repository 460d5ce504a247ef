import Testing

@testable import FerryHTTP

@Suite("RequestParser pipelining")
struct RequestParserPipeliningTests {
    static let three = wire(
        "GET /one HTTP/1.1\r\nHost: h\r\n\r\n"
            + "POST /two HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
            + "PUT /three?x=1 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2;e\r\nde\r\n0\r\nT: t\r\n\r\n")

    static func check(_ outcomes: [Outcome]) {
        let requests = outcomes.compactMap { if case .request(let r) = $0 { r } else { nil } }
        #expect(outcomes.count == 3)
        #expect(requests.map(\.path) == ["/one", "/two", "/three"])
        #expect(requests.map(\.body) == [[], wire("abc"), wire("de")])
        #expect(requests.last?.headers["T"] == "t")
    }

    @Test("three requests in one buffer come out one per next()")
    func oneBuffer() {
        var parser = RequestParser(limits: HTTPLimits())
        parser.append(Self.three)
        var paths: [String] = []
        for _ in 0..<3 {
            guard case .request(let r) = parser.next() else { Issue.record("expected a request"); return }
            paths.append(r.path)
            #expect(parser.hasPartialRequest == (paths.count < 3))
        }
        #expect(paths == ["/one", "/two", "/three"])
        #expect(isNeedMore(parser.next()))
        #expect(!parser.hasPartialRequest)
    }

    @Test("three requests byte by byte")
    func byteByByte() {
        Self.check(parse(Self.three, feed: .byteByByte).outcomes)
    }

    @Test("three requests split at every possible byte boundary")
    func everySplit() {
        for split in 0...Self.three.count {
            var parser = RequestParser(limits: HTTPLimits())
            var outcomes: [Outcome] = []
            parser.append(Array(Self.three[..<split]))
            drain(&parser, into: &outcomes)
            parser.append(Array(Self.three[split...]))
            drain(&parser, into: &outcomes)
            Self.check(outcomes)
        }
    }

    @Test("a refusal after good requests: the good ones come out first")
    func errorAfterGood() {
        let input = Self.three + wire("GET / HTTP/9.9\r\nHost: h\r\n\r\n")
        let (outcomes, _) = parse(input, feed: .whole)
        #expect(outcomes.count == 4)
        #expect(outcomes.last == .error(status: 505, reason: .versionNotSupported, close: true))
    }

    @Test("many pipelined requests fed byte by byte keep the buffer compact")
    func manyByteByByte() {
        let one = wire("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789")
        let count = 300
        var parser = RequestParser(limits: HTTPLimits())
        var outcomes: [Outcome] = []
        var maxBuffered = 0
        for _ in 0..<count {
            for byte in one {
                parser.append([byte])
                drain(&parser, into: &outcomes)
                maxBuffered = max(maxBuffered, parser.buffer.count)
            }
        }
        #expect(outcomes.count == count)
        #expect(maxBuffered <= RequestParser.compactionThreshold * 2)
    }

    @Test("a large pipelined batch appended in odd-sized pieces keeps the buffer compact")
    func manyInPieces() {
        let one = wire("GET /p?i=1 HTTP/1.1\r\nHost: h\r\n\r\n")
        let all = [UInt8]((0..<5000).map { _ in one }.joined())
        var parser = RequestParser(limits: HTTPLimits())
        var outcomes: [Outcome] = []
        var start = 0
        var maxBuffered = 0
        while start < all.count {
            let end = min(all.count, start + 997)
            parser.append(Array(all[start..<end]))
            drain(&parser, into: &outcomes)
            maxBuffered = max(maxBuffered, parser.buffer.count)
            start = end
        }
        #expect(outcomes.count == 5000)
        #expect(maxBuffered < 2 * 997 + RequestParser.compactionThreshold * 2)
    }
}
