#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

@testable import FerryHTTP

@Suite("RequestParser limits")
struct RequestParserLimitTests {
    /// A request line of exactly `length` bytes, CRLF excluded.
    static func requestLine(length: Int) -> String {
        let fixed = "GET /".utf8.count + " HTTP/1.1".utf8.count
        return "GET /" + String(repeating: "a", count: length - fixed) + " HTTP/1.1"
    }

    /// A header section of exactly `bytes` bytes of field lines (CRLFs included, final empty line excluded).
    static func headers(bytes: Int) -> String {
        let host = "Host: h\r\n"
        let padFixed = "X-Pad: \r\n".utf8.count
        return host + "X-Pad: " + String(repeating: "p", count: bytes - host.utf8.count - padFixed) + "\r\n"
    }

    @Test("request line at the limit is accepted, one byte over is 414", arguments: [0, 1], Feed.allCases)
    func requestLineBoundary(over: Int, feed: Feed) {
        let line = Self.requestLine(length: HTTPLimits().maxRequestLineBytes + over)
        let (outcomes, _) = parse(wire(line + "\r\nHost: h\r\n\r\n"), feed: feed)
        #expect(outcomes.count == 1)
        if over == 0 {
            guard case .request(let r) = outcomes.first else { Issue.record("\(outcomes)"); return }
            #expect(r.target.utf8.count == HTTPLimits().maxRequestLineBytes - 13)
        } else {
            #expect(outcomes == [.error(status: 414, reason: .targetTooLong, close: true)])
        }
    }

    @Test("header section at the limit is accepted, one byte over is 431", arguments: [0, 1], Feed.allCases)
    func headerBytesBoundary(over: Int, feed: Feed) {
        let input = "GET / HTTP/1.1\r\n" + Self.headers(bytes: HTTPLimits().maxHeaderBytes + over) + "\r\n"
        let (outcomes, _) = parse(wire(input), feed: feed)
        #expect(outcomes.count == 1)
        if over == 0 {
            guard case .request(let r) = outcomes.first else { Issue.record("\(outcomes)"); return }
            #expect(r.headers.count == 2)
        } else {
            #expect(outcomes == [.error(status: 431, reason: .headersTooLarge, close: true)])
        }
    }

    @Test("header count at the limit is accepted, one over is 431", arguments: [0, 1], Feed.allCases)
    func headerCountBoundary(over: Int, feed: Feed) {
        let count = HTTPLimits().maxHeaderCount + over
        let fields = "Host: h\r\n" + (1..<count).map { "X-\($0): v\r\n" }.joined()
        let (outcomes, _) = parse(wire("GET / HTTP/1.1\r\n" + fields + "\r\n"), feed: feed)
        #expect(outcomes.count == 1)
        if over == 0 {
            guard case .request(let r) = outcomes.first else { Issue.record("\(outcomes)"); return }
            #expect(r.headers.count == count)
        } else {
            #expect(outcomes == [.error(status: 431, reason: .headersTooLarge, close: true)])
        }
    }

    @Test("trailers count against the header field limit, dropped ones included", arguments: [0, 1])
    func trailerCountBoundary(over: Int) {
        // Head: Host + Transfer-Encoding = 2 fields; trailers fill up the rest.
        let trailers = (0..<(HTTPLimits().maxHeaderCount - 2 + over)).map { $0 == 0 ? "Content-Length: 1\r\n" : "T-\($0): v\r\n" }
        let input = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + trailers.joined() + "\r\n"
        let (outcomes, _) = parse(wire(input), feed: .whole)
        if over == 0 {
            guard case .request(let r) = outcomes.first else { Issue.record("\(outcomes)"); return }
            #expect(r.headers.count == HTTPLimits().maxHeaderCount - 1)
        } else {
            #expect(outcomes == [.error(status: 431, reason: .headersTooLarge, close: true)])
        }
    }

    @Test("Content-Length at the body limit is accepted, one over is 413 before any body", arguments: [0, 1], Feed.allCases)
    func contentLengthBoundary(over: Int, feed: Feed) {
        let length = 10 + over
        let head = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \(length)\r\n\r\n"
        let (outcomes, _) = parse(wire(head + String(repeating: "b", count: length)), feed: feed, limits: limits(maxBody: 10))
        #expect(outcomes.count == 1)
        if over == 0 {
            guard case .request(let r) = outcomes.first else { Issue.record("\(outcomes)"); return }
            #expect(r.body.count == 10)
        } else {
            #expect(outcomes == [.error(status: 413, reason: .bodyTooLarge, close: true)])
        }
    }

    @Test("413 is reported as soon as the head is complete, with no body sent")
    func contentLengthRefusedBeforeBody() {
        let head = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n"
        let (outcomes, _) = parse(wire(head), feed: .whole, limits: limits(maxBody: 10))
        #expect(outcomes == [.error(status: 413, reason: .bodyTooLarge, close: true)])
    }

    @Test("chunked body at the limit is accepted, one byte over is 413", arguments: [0, 1], Feed.allCases)
    func chunkedBoundary(over: Int, feed: Feed) {
        let chunks = "4\r\nabcd\r\n6\r\nefghij\r\n" + (over == 1 ? "1\r\nk\r\n" : "") + "0\r\n\r\n"
        let input = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
        let (outcomes, _) = parse(wire(input), feed: feed, limits: limits(maxBody: 10))
        #expect(outcomes.count == 1)
        if over == 0 {
            guard case .request(let r) = outcomes.first else { Issue.record("\(outcomes)"); return }
            #expect(r.body == wire("abcdefghij"))
        } else {
            #expect(outcomes == [.error(status: 413, reason: .bodyTooLarge, close: true)])
        }
    }

    @Test("chunk extensions: 64 KiB in total are accepted, one byte more is 400", arguments: [0, 1])
    func chunkExtensionTotal(over: Int) {
        let ext = ";" + String(repeating: "e", count: 2047)
        var chunks = String(repeating: "1\(ext)\r\nz\r\n", count: 31)
        chunks += "1\(ext)\(over == 1 ? "e" : "")\r\nz\r\n0\r\n\r\n"
        let input = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
        let (outcomes, _) = parse(wire(input), feed: .whole)
        if over == 0 {
            guard case .request(let r) = outcomes.first else { Issue.record("\(outcomes)"); return }
            #expect(r.body.count == 32)
        } else {
            #expect(outcomes == [.error(status: 400, reason: .malformed, close: true)])
        }
    }

    @Test("the LF search resumes where it stopped, so byte-by-byte feeding is linear")
    func scanResumes() {
        var parser = RequestParser(limits: HTTPLimits())
        parser.append(wire("GET / HTTP/1.1\r\nHost: h\r\nX-Long: "))
        #expect(isNeedMore(parser.next()))
        for _ in 0..<5000 {
            parser.append([UInt8(ascii: "v")])
            #expect(isNeedMore(parser.next()))
            #expect(parser.scanIndex == parser.buffer.count)
        }
        parser.append(wire("\r\n\r\n"))
        guard case .request(let r) = parser.next() else { Issue.record("expected a request"); return }
        #expect(r.headers["X-Long"]?.utf8.count == 5000)
    }

    @Test("the parser is dead after a closing error")
    func deadAfterError() {
        var parser = RequestParser(limits: HTTPLimits())
        parser.append(wire("GET / HTTP/1.1\r\nHost : h\r\n\r\n"))
        guard case .error(let first) = parser.next() else { Issue.record("expected an error"); return }
        #expect(first.status == 400)
        #expect(first.closeConnection)
        for _ in 0..<3 {
            parser.append(wire("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
            guard case .error(let again) = parser.next() else { Issue.record("parser came back to life"); return }
            #expect(again == first)
        }
        #expect(parser.buffer.isEmpty, "a dead parser buffers nothing more")
        #expect(!parser.hasPartialRequest)
        #expect(!parser.isReadingHead)
    }

    @Test("hasPartialRequest and isReadingHead follow the request's progress")
    func progressFlags() {
        var parser = RequestParser(limits: HTTPLimits())
        #expect(!parser.hasPartialRequest && !parser.isReadingHead)
        parser.append(wire("\r\n"))
        #expect(isNeedMore(parser.next()))
        #expect(!parser.hasPartialRequest, "an ignored empty line starts no request")
        parser.append(wire("P"))
        #expect(isNeedMore(parser.next()))
        #expect(parser.hasPartialRequest && parser.isReadingHead)
        parser.append(wire("OST / HTTP/1.1\r\nHost: h\r\n"))
        #expect(isNeedMore(parser.next()))
        #expect(parser.hasPartialRequest && parser.isReadingHead)
        parser.append(wire("Content-Length: 2\r\n\r\n"))
        #expect(isNeedMore(parser.next()))
        #expect(parser.hasPartialRequest && !parser.isReadingHead)
        parser.append(wire("ok"))
        guard case .request = parser.next() else { Issue.record("expected a request"); return }
        #expect(!parser.hasPartialRequest && !parser.isReadingHead)
    }

    /// CPU time of this process, in seconds.
    static func cpuTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Process CPU time counts every thread, and other tests run in parallel; the best of a few
    /// runs measures the parser rather than its neighbours, and still fails if the parser is slow.
    @Test(
        "a 1 MiB line without CRLF is refused in well under 10 ms of CPU",
        arguments: [("", 414), ("GET / HTTP/1.1\r\nX-Long: ", 431)])
    func hugeLineIsCheap(prefix: String, status: Int) {
        var input = wire(prefix)
        input += [UInt8](repeating: UInt8(ascii: "a"), count: 1024 * 1024 - input.count)
        let pieces = stride(from: 0, to: input.count, by: 64 * 1024).map { Array(input[$0..<min(input.count, $0 + 64 * 1024)]) }
        var best = Double.infinity
        for _ in 0..<5 {
            var parser = RequestParser(limits: HTTPLimits())
            var refusedAt: Int?
            var got = 0
            let start = Self.cpuTime()
            for (i, piece) in pieces.enumerated() {
                parser.append(piece)
                if case .error(let e) = parser.next(), refusedAt == nil {
                    refusedAt = i
                    got = e.status
                }
            }
            best = min(best, Self.cpuTime() - start)
            #expect(refusedAt == 0, "refused as soon as the limit is crossed")
            #expect(got == status)
        }
        #expect(best < 0.010, "took \(best * 1000) ms of CPU")
    }
}
