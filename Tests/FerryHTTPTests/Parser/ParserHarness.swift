import Testing

@testable import FerryHTTP

/// How a test delivers its bytes to the parser.
enum Feed: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case whole
    case byteByByte

    var testDescription: String { rawValue }
}

/// A parser event minus `.needMore`, comparable in tests.
enum Outcome: Equatable, CustomStringConvertible {
    case expectContinue
    case request(RequestSummary)
    case error(status: Int, reason: HTTPError.Reason, close: Bool)

    var description: String {
        switch self {
        case .expectContinue: "expectContinue"
        case .request(let r): "request(\(r.method) \(r.target))"
        case .error(let status, let reason, _): "error(\(status) \(reason))"
        }
    }
}

/// Every observable part of an `HTTPRequest`, Equatable for `#expect`.
struct RequestSummary: Equatable {
    var method: String
    var target: String
    var path: String
    var rawQuery: String?
    var query: [String]
    var version: HTTPVersion
    var headers: HTTPHeaders
    var body: [UInt8]
    var keepAlive: Bool

    init(_ r: HTTPRequest) {
        method = r.method
        target = r.target
        path = r.path
        rawQuery = r.rawQuery
        query = r.query.map { "\($0.name)=\($0.value)" }
        version = r.version
        headers = r.headers
        body = r.body
        keepAlive = r.keepAlive
    }
}

/// The bytes of a string, which tests write with explicit `\r\n`.
func wire(_ s: String) -> [UInt8] { Array(s.utf8) }

/// Drains the parser: calls next() until it needs more bytes or has failed.
func drain(_ parser: inout RequestParser, into outcomes: inout [Outcome]) {
    while true {
        switch parser.next() {
        case .needMore:
            return
        case .expectContinue:
            outcomes.append(.expectContinue)
        case .request(let r):
            outcomes.append(.request(RequestSummary(r)))
        case .error(let e):
            outcomes.append(.error(status: e.status, reason: e.reason, close: e.closeConnection))
            return
        }
    }
}

/// Feeds `input` as `feed` says, draining after every append, and stops at the first error.
func parse(
    _ input: [UInt8], feed: Feed, limits: HTTPLimits = HTTPLimits()
) -> (outcomes: [Outcome], parser: RequestParser) {
    var parser = RequestParser(limits: limits)
    var outcomes: [Outcome] = []
    switch feed {
    case .whole:
        parser.append(input)
        drain(&parser, into: &outcomes)
    case .byteByByte:
        for byte in input {
            parser.append([byte])
            drain(&parser, into: &outcomes)
            if case .error = outcomes.last { break }
        }
    }
    return (outcomes, parser)
}

/// Parses input expected to hold exactly one request and returns it.
func parseOne(_ input: String, feed: Feed, limits: HTTPLimits = HTTPLimits()) throws -> RequestSummary {
    let (outcomes, _) = parse(wire(input), feed: feed, limits: limits)
    try #require(outcomes.count == 1, "expected one request, got \(outcomes)")
    guard case .request(let r) = outcomes[0] else {
        Issue.record("expected a request, got \(outcomes[0])")
        throw HarnessError.notARequest
    }
    return r
}

enum HarnessError: Error { case notARequest }

/// Limits with a small body limit, for body boundary tests.
func limits(maxBody: Int = HTTPLimits().maxBodyBytes, maxHeaderCount: Int = HTTPLimits().maxHeaderCount) -> HTTPLimits {
    var l = HTTPLimits()
    l.maxBodyBytes = maxBody
    l.maxHeaderCount = maxHeaderCount
    return l
}
