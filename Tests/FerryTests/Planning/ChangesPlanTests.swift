@testable import Ferry
import FerryHTTP
import Testing

/// The changes feed's own action and plan, like the resources': the request
/// parsed (`ChangesRequest`) and the statements planned (`ChangesPlan`)
/// without a database.
@Suite struct ChangesPlanTests {
    typealias F = PipelineFixture

    private func parse(_ query: String) throws -> ChangesRequest {
        try ChangesRequest(F.request("GET", "/v1/changes" + (query.isEmpty ? "" : "?" + query)), catalog: F.catalog)
    }

    @Test func defaultsAreTheWholeCatalogFromTheStart() throws {
        let request = try parse("")
        #expect(request.since == ChangeCursor.start)
        #expect(!request.hasSince)
        #expect(!request.startsNow)
        #expect(request.limit == ChangesRequest.defaultLimit)
        #expect(Set(request.resources) == ["sets", "terms", "counters"])
        // Parents before the rows that reference them, so a client applies a page in order.
        let sets = try #require(request.resources.firstIndex(of: "sets"))
        let terms = try #require(request.resources.firstIndex(of: "terms"))
        #expect(sets < terms)
    }

    @Test func sinceLimitAndResourcesAreRead() throws {
        let cursor = ChangeCursor(afterXID: 42, position: (resource: "terms", id: F.term))
        let request = try parse("since=\(cursor.token)&limit=7&resources=terms,sets,terms")
        #expect(request.since == cursor)
        #expect(request.hasSince)
        #expect(request.limit == 7)
        #expect(request.resources == ["sets", "terms"])
        #expect(try parse("since=now").startsNow)
    }

    @Test func badQueriesAre400InvalidQuery() {
        for query in [
            "since=garbage", "limit=0", "limit=5001", "limit=1e3", "resources=", "resources=sets,,terms",
            "resources=nothing", "colour=red", "limit=1&limit=2",
        ] {
            let problem = F.thrownProblem { _ = try parse(query) }
            #expect(problem?.status == 400, "\(query)")
            #expect(problem?.code == .invalidQuery, "\(query)")
        }
    }

    @Test func thePageStatementBindsTheCursorAndOneMoreThanThePage() throws {
        let start = ChangesPlan(request: try parse("limit=10&resources=sets"), catalog: F.catalog, scopes: []).statement
        #expect(start.binds == [.text("0"), .bool(true), .bool(false), .null, .text("0"), .int(11)])
        #expect(start.binds.map(\.text) == ["0", "true", "false", nil, "0", "11"])
        #expect(start.sql.contains(#"FROM "app"."sets""#))
        #expect(!start.sql.contains(#""app"."terms""#))
        let cursor = ChangeCursor(afterXID: 42, position: (resource: "terms", id: F.term))
        let later = ChangesPlan(request: try parse("since=\(cursor.token)"), catalog: F.catalog, scopes: []).statement
        #expect(later.binds == [.text("42"), .bool(false), .bool(true), .text(F.term), .text("0"), .int(Int64(ChangesRequest.defaultLimit + 1))])
        // The activity check binds the cursor as the page does (ChangeCursor.bind(into:)).
        let activity = ChangesPlan(request: try parse("since=\(cursor.token)"), catalog: F.catalog, scopes: []).activityStatement
        #expect(activity.binds == Array(later.binds.prefix(5)))
        try Snapshot.check("changes-page", later.sql)
    }

    @Test func theActivityProbeChecksEveryStreamAndTheAccessLogs() throws {
        let plan = ChangesPlan(request: try parse("resources=terms,sets"), catalog: F.catalog, scopes: [])
        let probe = plan.activityStatement
        #expect(probe.sql.contains(#"FROM "app"."terms" t WHERE t._ferry_xid > $1::xid8"#))
        #expect(probe.sql.contains(#"FROM "app"."sets" t"#))
        // From the start a page reads neither access log (the device holds nothing), so nor does its probe.
        #expect(!probe.sql.contains("ferry.access_grants") && !probe.sql.contains("ferry.access_revocations"))
        let cursor = ChangeCursor(afterXID: 42, position: (resource: "terms", id: F.term))
        let later = ChangesPlan(request: try parse("resources=terms,sets&since=\(cursor.token)"), catalog: F.catalog, scopes: [])
        #expect(later.activityStatement.sql.contains("ferry.access_grants"))
        #expect(later.activityStatement.sql.contains("ferry.access_revocations"))
        try Snapshot.check("changes-activity", probe.sql)
    }
}

/// `POST /v1/batch`'s parse: every operation checked before any runs.
@Suite struct BatchOperationTests {
    private func parse(_ body: String, max: Int = 3) throws -> [BatchOperation] {
        try BatchOperation.parse(Array(body.utf8), maxOperations: max, maxPathBytes: 8_192)
    }

    @Test func operationsBecomeTheRequestsTheyStandFor() throws {
        let operations = try parse(
            """
            {"operations": [
              {"method": "POST", "path": "/v1/sets", "body": {"title": "a"}},
              {"method": "DELETE", "path": "/v1/sets/x?revision=3", "headers": {"If-Match": "\\"3\\""}}
            ]}
            """)
        #expect(operations.map(\.method) == ["POST", "DELETE"])
        #expect(operations.map(\.path) == ["/v1/sets", "/v1/sets/x"])
        let delete = operations[1].request(authorization: "Bearer t")
        #expect(delete.queryValue("revision") == "3")
        #expect(delete.headers["If-Match"] == "\"3\"")
        #expect(delete.headers["Authorization"] == "Bearer t")
        let post = operations[0].request(authorization: "Bearer t")
        #expect(String(decoding: post.body, as: UTF8.self).contains("\"title\""))
    }

    @Test func aBadOperationIsA400NamingItsIndex() {
        let cases = [
            #"{"operations": [{"method": "GET", "path": "/v1/sets"}, {"method": "HEAD", "path": "/v1/sets"}]}"#,
            #"{"operations": [{"method": "GET", "path": "/v1/sets"}, {"method": "GET", "path": "v1/sets"}]}"#,
            #"{"operations": [{"method": "GET", "path": "/v1/sets"}, {"method": "GET", "path": "/v1/a b"}]}"#,
            #"{"operations": [{"method": "GET", "path": "/v1/sets"}, {"method": "GET", "path": "/v1/sets", "extra": 1}]}"#,
            #"{"operations": [{"method": "GET", "path": "/v1/sets"}, 3]}"#,
        ]
        for body in cases {
            let problem = PipelineFixture.thrownProblem { _ = try parse(body) }
            #expect(problem?.status == 400, "\(body)")
            let index = problem?.extra.first { $0.0 == "operation_index" }?.1
            #expect(index.map { "\($0)" } == "\(JSONValue.int(1))", "\(body)")
        }
    }

    @Test func theBodyAndTheCountAreCheckedFirst() {
        #expect(PipelineFixture.thrownProblem { _ = try parse(#"{"ops": []}"#) }?.status == 400)
        #expect(PipelineFixture.thrownProblem { _ = try parse("[") }?.code == .invalidJson)
        let many = #"{"operations": [\#(Array(repeating: #"{"method": "GET", "path": "/v1/sets"}"#, count: 4).joined(separator: ","))]}"#
        #expect(PipelineFixture.thrownProblem { _ = try parse(many) }?.code == .tooManyItems)
    }
}
