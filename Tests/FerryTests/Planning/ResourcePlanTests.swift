@testable import Ferry
import FerryHTTP
import Foundation
import Testing

/// Every resource action's plan: its SQL (as a snapshot under `Snapshots/`,
/// so a change to a statement shows in review), its typed binds and its plan
/// key. No database: the planner is pure.
///
/// To accept a changed statement, run with `FERRY_RECORD_SNAPSHOTS=1` and
/// review the diff of `Snapshots/`.
@Suite struct ResourcePlanTests {
    typealias F = PipelineFixture

    private func plan(
        _ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = [],
        scopes: [AccessScope] = [], cache: PlanCache = PlanCache()
    ) throws -> ResourcePlan {
        ResourcePlanner(catalog: F.catalog, scopes: scopes, plans: cache)
            .plan(try F.parse(method, target, body: body, headers: headers))
    }

    @Test func readBindsTheIdAndTheRevisionsToLeaveOut() throws {
        guard case .read(let statement, _) = try plan("GET", "/v1/terms/\(F.term)", headers: [("If-None-Match", #""3", "x""#)]) else {
            Issue.record("not a read")
            return
        }
        #expect(statement.binds == [.text(F.term), .revisions([Revision(value: 3)!])])
        #expect(statement.postgres.params == [F.term, "{\"3\"}"])
        try Snapshot.check("read", statement.sql)
        guard case .read(let plain, _) = try plan("GET", "/v1/terms/\(F.term)") else { Issue.record("not a read"); return }
        #expect(plain.binds == [.text(F.term), .revisions(nil)])
        #expect(plain.postgres.params == [F.term, nil])
    }

    @Test func readManyBindsTheIdsAsSentAndAsParsed() throws {
        guard case .readMany(let statement, _) = try plan("GET", "/v1/terms/\(F.term),bad") else { Issue.record("not a readMany"); return }
        #expect(statement.binds == [.texts([F.term, "bad"]), .texts([F.term, nil])])
        try Snapshot.check("read-many", statement.sql)
    }

    @Test func anUnpagedIndexIsOneStatement() throws {
        guard case .index(let statement, let limit, _) = try plan("GET", "/v1/counters?hits=1,2&order=hits.desc&limit=3") else {
            Issue.record("not an index")
            return
        }
        #expect(limit == 3)
        #expect(statement.binds == [.texts(["1", "2"]), .int(3)])
        #expect(statement.postgres.params == ["{\"1\",\"2\"}", "3"])
        try Snapshot.check("index", statement.sql)
    }

    @Test func aPagedIndexHandsPagingItsQuery() throws {
        guard case .pagedIndex(let query, let resource, let limit, _) = try plan("GET", "/v1/terms?set_id=\(F.set)&modified_since=5") else {
            Issue.record("not a paged index")
            return
        }
        #expect(resource == "terms")
        #expect(limit == F.limits.defaultLimit)
        #expect(query.table == #""app"."terms""#)
        #expect(query.binds == [.texts([F.set]), .int(5)])
        #expect(query.binds.map(\.text) == ["{\"\(F.set)\"}", "5"])
        try Snapshot.check("index-paged", [query.condition, query.orderBy, query.rowJSON, query.rowVersion].joined(separator: "\n-- \n"))
    }

    /// A member readable only through its scope is read through the scope
    /// rows, unless the query already filters the scope's column.
    @Test func anIndexReadsThroughItsScope() throws {
        let scopes = [AccessScope(scope: "sets", member: "terms", column: "set_id", readThroughScope: true)]
        guard case .pagedIndex(let driven, _, _, _) = try plan("GET", "/v1/terms", scopes: scopes) else { Issue.record("not paged"); return }
        #expect(driven.condition.contains(#"t."set_id" = ANY (ARRAY(SELECT s."id" FROM "app"."sets" s))"#))
        guard case .pagedIndex(let filtered, _, _, _) = try plan("GET", "/v1/terms?set_id=\(F.set)", scopes: scopes) else {
            Issue.record("not paged")
            return
        }
        #expect(!filtered.condition.contains(#""app"."sets""#))
    }

    /// A paged Index's parts come from the plan cache, with each request's
    /// own binds; a change of access scopes (the catalog's, not the table's)
    /// plans again instead of reading through a scope no longer declared.
    @Test func aPagedIndexIsCachedAndReboundAndScopesAreInItsKey() throws {
        let cache = PlanCache()
        let scopes = [AccessScope(scope: "sets", member: "terms", column: "set_id", readThroughScope: true)]
        guard case .pagedIndex(let first, _, _, _) = try plan("GET", "/v1/terms?modified_since=5", scopes: scopes, cache: cache),
            case .pagedIndex(let second, _, _, _) = try plan("GET", "/v1/terms?modified_since=9", scopes: scopes, cache: cache)
        else { Issue.record("not paged"); return }
        #expect(cache.count == 1)
        #expect(first.condition == second.condition)
        #expect(first.binds == [.int(5)])
        #expect(second.binds == [.int(9)])
        guard case .pagedIndex(let unscoped, _, _, _) = try plan("GET", "/v1/terms?modified_since=5", cache: cache) else {
            Issue.record("not paged")
            return
        }
        #expect(cache.count == 2)
        #expect(first.condition.contains(#""app"."sets""#))
        #expect(!unscoped.condition.contains(#""app"."sets""#))
        #expect(unscoped.binds == [.int(5)])
        _ = try plan("GET", "/v1/terms?limit=3", scopes: scopes, cache: cache)
        #expect(cache.count == 3, "modified_since changes the condition, so it is part of the shape")
    }

    @Test func createOneIsItsOwnStatementAndManyGoThroughWriteItems() throws {
        guard case .write(let one, _, let single, true) = try plan("POST", "/v1/terms", body: #"{"set_id": "\#(F.set)", "word": "w"}"#) else {
            Issue.record("not a write")
            return
        }
        #expect(single)
        #expect(one.binds == [.json(#"[{"set_id": "\#(F.set)", "word": "w"}]"#)])
        try Snapshot.check("create-one", one.sql)
        guard case .write(let many, _, let manySingle, true) = try plan("POST", "/v1/terms", body: #"[{"word": "a"}, {"word": "b"}]"#) else {
            Issue.record("not a write")
            return
        }
        #expect(!manySingle)
        #expect(many.sql == "SELECT * FROM ferry.write_items($1::regclass, $2::text, $3::jsonb)")
        guard case .text(let inner) = many.binds[1] else { Issue.record("\(many.binds)"); return }
        #expect(many.binds[0] == .text(#""app"."terms""#))
        #expect(many.binds[2] == .json(#"[{"word": "a"}, {"word": "b"}]"#))
        try Snapshot.check("create-many", inner)
    }

    @Test func aSingleWriteHasAFastPathAndAnExactOne() throws {
        for (method, target, body, name) in [
            ("PATCH", "/v1/terms/\(F.term)", #"{"word": "w"}"#, "patch"),
            ("PUT", "/v1/terms/\(F.term)", #"{"word": "w"}"#, "put"),
            ("DELETE", "/v1/terms/\(F.term)?revision=4", nil, "delete"),
        ] as [(String, String, String?, String)] {
            guard case .update(let fast, let exact, _) = try plan(method, target, body: body, headers: [("If-Match", #""4""#)]) else {
                Issue.record("\(method) is not an update")
                continue
            }
            let item: Bind = body.map { .json("[\($0)]") } ?? .json(#"[{"revision":4}]"#)
            #expect(exact.binds == [item, .text(F.term), .revisions([Revision(value: 4)!]), .bool(false)], "\(method)")
            #expect(exact.postgres.params.suffix(2) == ["{\"4\"}", "false"], "\(method)")
            try Snapshot.check("update-\(name)", exact.sql)
            guard let fast else { Issue.record("\(method) has no fast path"); continue }
            // The base revision the server read (none in the PATCH and PUT bodies; the DELETE's
            // `?revision=`) comes fifth, so that the fast statement need not read it from the item.
            #expect(fast.binds == exact.binds + [body == nil ? Bind.int(4) : Bind.null], "\(method)")
            #expect(!fast.sql.contains("-> 'revision'"), "\(method): the base revision is not read from the item")
            #expect(fast.sql.contains("$5::bigint"), "\(method)")
            try Snapshot.check("update-\(name)-fast", fast.sql)
        }
    }

    @Test func bulkWritesBindNoPathIdAndNoIfMatch() throws {
        guard case .write(let one, _, false, false) = try plan("PATCH", "/v1/terms", body: #"[{"id": "\#(F.term)", "revision": 1}]"#) else {
            Issue.record("not a write")
            return
        }
        #expect(one.binds.dropFirst() == [.null, .revisions(nil), .bool(false)])  // NULL path id, NULL revisions
        try Snapshot.check("update-patch", one.sql)  // one item: the same statement as a single PATCH's exact path
        guard case .write(let many, _, false, false) = try plan("DELETE", "/v1/terms", body: #"[{"id": "a"}, {"id": "b"}]"#) else {
            Issue.record("not a write")
            return
        }
        guard case .text(let inner) = many.binds[1] else { Issue.record("\(many.binds)"); return }
        try Snapshot.check("delete-many", inner)
    }

    @Test func aRefusalPlansNothingButTheTokenCheck() throws {
        guard case .refuse(let problem) = try plan("GET", "/v1/terms/not-an-id") else { Issue.record("not refused"); return }
        #expect(problem.status == 404)
        guard case .refuse(let unknown) = try plan("GET", "/v1/nothing") else { Issue.record("not refused"); return }
        #expect(unknown.status == 404)
    }

    /// Plans are cached by a typed key: the resource and the shape, never the values.
    @Test func valuesShareAPlanAndShapesDoNot() throws {
        let cache = PlanCache()
        _ = try plan("GET", "/v1/terms/\(F.term)", cache: cache)
        _ = try plan("GET", "/v1/terms/\(F.set)", headers: [("If-None-Match", #""9""#)], cache: cache)
        #expect(cache.count == 1)
        _ = try plan("GET", "/v1/counters?hits=1", cache: cache)
        _ = try plan("GET", "/v1/counters?hits=2,3", cache: cache)
        #expect(cache.count == 2)
        _ = try plan("GET", "/v1/counters?hits=1&order=hits", cache: cache)
        #expect(cache.count == 3)
        _ = try plan("PATCH", "/v1/terms/\(F.term)", body: #"{"word": "w"}"#, cache: cache)
        _ = try plan("PATCH", "/v1/terms/\(F.set)", body: #"{"word": "other"}"#, cache: cache)
        #expect(cache.count == 5)  // the fast path and the exact one
        #expect(
            PlanKey(resource: "terms", shape: .update(.patch, references: "", oneItem: true))
                != PlanKey(resource: "terms", shape: .update(.put, references: "", oneItem: true)))
    }
}

/// SQL snapshots stored beside the tests, compared byte for byte.
enum Snapshot {
    static func check(_ name: String, _ text: String, filePath: String = #filePath) throws {
        let url = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Snapshots/\(name).txt")
        let text = text.hasSuffix("\n") ? text : text + "\n"
        if ProcessInfo.processInfo.environment["FERRY_RECORD_SNAPSHOTS"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        guard let stored = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("no snapshot \(name).txt: run with FERRY_RECORD_SNAPSHOTS=1 and review it")
            return
        }
        #expect(stored == text, "the plan's SQL differs from Snapshots/\(name).txt")
    }
}
