@testable import Ferry
import FerryHTTP
import Testing

/// The live parts of a changes request, parsed without a database: `wait`,
/// `Accept: text/event-stream` and `Last-Event-ID`.
@Suite struct LiveRequestTests {
    typealias F = PipelineFixture

    private func parse(_ query: String, headers: [(String, String)] = []) throws -> ChangesRequest {
        try ChangesRequest(F.request("GET", "/v1/changes" + (query.isEmpty ? "" : "?" + query), headers: headers), catalog: F.catalog)
    }

    @Test func waitIsWholeSecondsFromZero() throws {
        #expect(try parse("").wait == nil)
        #expect(try parse("wait=0").wait == 0)
        #expect(try parse("wait=25").wait == 25)
        #expect(try parse("wait=100000").wait == 100_000)
        for bad in ["wait=-1", "wait=1.5", "wait=", "wait=x", "wait=1234567890", "wait=1&wait=2"] {
            #expect(throws: Problem.self, "\(bad)") { try parse(bad) }
        }
    }

    @Test func theStreamIsAskedForByAccept() throws {
        #expect(try !parse("").stream)
        #expect(try parse("", headers: [("Accept", "text/event-stream")]).stream)
        #expect(try parse("", headers: [("Accept", "application/json, Text/Event-Stream ; q=0.5")]).stream)
        #expect(try !parse("", headers: [("Accept", "text/event-stream;q=0")]).stream)
        #expect(try !parse("", headers: [("Accept", "application/json")]).stream)
        #expect(try !parse("", headers: [("Accept", "text/event-streaming")]).stream)
    }

    @Test func lastEventIDWinsOverSince() throws {
        let given = ChangeCursor(afterXID: 7)
        let last = ChangeCursor(afterXID: 42, position: (resource: "terms", id: F.term))
        let stream = try parse("since=\(given.token)", headers: [("Accept", "text/event-stream"), ("Last-Event-ID", last.token)])
        #expect(stream.since == last)
        #expect(stream.hasSince)
        #expect(try parse("since=\(given.token)", headers: [("Last-Event-ID", last.token)]).since == last)
        #expect(try parse("", headers: [("Accept", "text/event-stream"), ("Last-Event-ID", "")]).since == .start)
        #expect(throws: Problem.self) { try parse("", headers: [("Accept", "text/event-stream"), ("Last-Event-ID", "garbage")]) }
        #expect(throws: Problem.self) { try parse("", headers: [("Last-Event-ID", "garbage")]) }
    }

    @Test func aWaiterFollowsTheResourcesItNames() throws {
        #expect(try parse("").followedResources == nil)
        #expect(try parse("resources=terms,sets").followedResources == ["terms", "sets"])
        let request = try parse("resources=terms&wait=5", headers: [("Accept", "text/event-stream")])
        let next = request.continuing(after: ChangeCursor(afterXID: 9))
        #expect(next.since == ChangeCursor(afterXID: 9))
        #expect(next.resources == ["terms"] && next.wait == 5 && next.stream && next.followedResources == ["terms"])
    }

    @Test func theWaitersActivityCheckAsksWhatTheFrontierHoldsBack() throws {
        let since = ChangeCursor(afterXID: 9).token
        let plan = ChangesPlan(request: try parse("since=\(since)"), catalog: F.catalog, scopes: [])
        let plain = plan.activityStatement
        let waiting = plan.activityStatement(waiting: true)
        #expect(waiting.binds == plain.binds)
        #expect(!plain.sql.contains(">= s.frontier"))
        // One probe per resource and access log, each from the frontier up.
        #expect(waiting.sql.components(separatedBy: ">= s.frontier").count - 1 == F.catalog.names.count + 2)
        // From the start a page reads neither access log, so nor does its probe.
        let start = ChangesPlan(request: try parse(""), catalog: F.catalog, scopes: []).activityStatement(waiting: true)
        #expect(start.sql.components(separatedBy: ">= s.frontier").count - 1 == F.catalog.names.count)
    }
}
