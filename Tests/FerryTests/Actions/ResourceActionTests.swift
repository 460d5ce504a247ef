@testable import Ferry
import FerryHTTP
import Testing

/// Every resource route's parse, and every answer that parsing alone decides:
/// no socket, no database.
@Suite struct ResourceActionTests {
    typealias F = PipelineFixture
    let hash = Credential.token(hash: BearerToken.hash(PipelineFixture.token))

    // MARK: - The eight routes

    @Test func readTakesTheIdAndTheValidators() throws {
        let action = try F.parse("GET", "/v1/terms/\(F.term)", headers: [("If-None-Match", #"W/"7", "x""#)])
        #expect(action.resource == F.terms)
        #expect(action.credential == hash)
        guard case .read(let id, let conditions) = action.kind else { Issue.record("\(action.kind)"); return }
        #expect(id == F.term)
        #expect(conditions.noneMatch == .tags(["7", "x"]))
        #expect(conditions.revisions?.map(\.value) == [7])
        #expect(conditions.notModified(etag: #""7""#, lastModifiedMs: nil))
        #expect(!conditions.notModified(etag: #""8""#, lastModifiedMs: nil))
    }

    @Test func readManyDeduplicatesInOrderAndMarksMalformedIds() throws {
        let action = try F.parse("GET", "/v1/terms/\(F.term),nope,\(F.set),\(F.term)")
        guard case .readMany(let ids, let parsed, _) = action.kind else { Issue.record("\(action.kind)"); return }
        #expect(ids == [F.term, "nope", F.set])
        #expect(parsed == [F.term, nil, F.set])
    }

    @Test func indexParsesTheQueryAndPagesOnlyUUIDResources() throws {
        let action = try F.parse("GET", "/v1/terms?set_id=\(F.set)&order=word.desc&limit=2&include_deleted=true")
        guard case .index(let query, _, let paged) = action.kind else { Issue.record("\(action.kind)"); return }
        #expect(paged)
        #expect(query.filters.map(\.column) == ["set_id"])
        #expect(query.filters.map(\.values) == [[F.set]])
        #expect(query.order.map(\.column) == ["word"])
        #expect(query.order.map(\.descending) == [true])
        #expect(query.limit == 2)
        #expect(query.includeDeleted)
        let counters = try F.parse("GET", "/v1/counters")
        guard case .index(let plain, _, let countersPaged) = counters.kind else { Issue.record("\(counters.kind)"); return }
        #expect(!countersPaged)
        #expect(plain.limit == F.limits.defaultLimit)
    }

    /// Which actions read public rows (core 0025): reads and Index, unless
    /// `public=false`; never a write, not even one refused before it runs.
    @Test func onlyReadsSeePublicRowsAndPublicFalseTurnsThemOff() throws {
        #expect(try F.parse("GET", "/v1/terms/\(F.term)").readsPublic)
        #expect(try F.parse("GET", "/v1/terms/\(F.term),\(F.set)").readsPublic)
        #expect(try F.parse("GET", "/v1/terms").readsPublic)
        #expect(try F.parse("GET", "/v1/terms?public=true").readsPublic)
        #expect(try !F.parse("GET", "/v1/terms?public=false").readsPublic)
        #expect(try !F.parse("POST", "/v1/sets", body: #"{"title": "a"}"#).readsPublic)
        #expect(try !F.parse("PATCH", "/v1/sets/\(F.set)", body: #"{"title": "b"}"#).readsPublic)
        #expect(try !F.parse("DELETE", "/v1/sets/\(F.set)").readsPublic)
        #expect(try !F.parse("GET", "/v1/nothing_here").readsPublic)
    }

    @Test func createTakesAnObjectOrAnArray() throws {
        let one = try F.parse("POST", "/v1/sets", body: #"{"title": "a"}"#)
        guard case .create(let items) = one.kind else { Issue.record("\(one.kind)"); return }
        #expect(items.items == #"[{"title": "a"}]"#)
        #expect(items.count == 1)
        #expect(items.single)
        let many = try F.parse("POST", "/v1/sets", body: #"[{"title": "a"}, {"title": "b"}]"#)
        guard case .create(let array) = many.kind else { Issue.record("\(many.kind)"); return }
        #expect(array.count == 2)
        #expect(!array.single)
        #expect(array.items == #"[{"title": "a"}, {"title": "b"}]"#)
    }

    /// A single object is wrapped as it is copied, byte for byte (multi-byte UTF-8 included);
    /// bytes that are not UTF-8 are refused, not repaired: a row would keep text the client
    /// never sent (`BodyScan`).
    @Test func aSingleObjectIsWrappedAsSentAndIllFormedUTF8IsRefused() throws {
        var request = F.request("POST", "/v1/sets", body: "")
        request.body = Array(#"{"title": "á €😀"}"#.utf8)
        let action = try ResourceAction.parse(
            request, route: .create, parameters: RouteParameters([("resource", "sets")]),
            catalog: F.catalog, limits: F.limits)
        guard case .create(let items) = action.kind else { Issue.record("\(action.kind)"); return }
        #expect(Array(items.items.utf8) == [UInt8(ascii: "[")] + request.body + [UInt8(ascii: "]")])
        request.body = Array(#"{"title": "a"#.utf8) + [0xFF, 0xC3] + Array(#""}"#.utf8)
        #expect(throws: Problem.self) {
            _ = try ResourceAction.parse(
                request, route: .create, parameters: RouteParameters([("resource", "sets")]), catalog: F.catalog, limits: F.limits)
        }
    }

    @Test func bulkPatchAndBulkDeleteTakeArrays() throws {
        let patch = try F.parse("PATCH", "/v1/terms", body: #"[{"id": "\#(F.term)", "revision": 1, "word": "w"}]"#)
        guard case .updateMany(let mode, let items) = patch.kind else { Issue.record("\(patch.kind)"); return }
        #expect(mode == .patch)
        #expect(items.count == 1)
        let delete = try F.parse("DELETE", "/v1/terms", body: #"[{"id": "\#(F.term)", "revision": 1}]"#)
        guard case .updateMany(.delete, _) = delete.kind else { Issue.record("\(delete.kind)"); return }
    }

    @Test func patchAndPutCarryIfMatchAndThePrecheck() throws {
        let patch = try F.parse("PATCH", "/v1/terms/\(F.term)", body: #"{"word": "w"}"#, headers: [("If-Match", #""3", W/"4""#)])
        guard case .update(let id, let mode, let item, let preconditions, let prechecked, let base) = patch.kind else {
            Issue.record("\(patch.kind)")
            return
        }
        #expect(id == F.term)
        #expect(mode == .patch)
        #expect(item == #"[{"word": "w"}]"#)
        #expect(preconditions == WritePreconditions(revisions: [Revision(value: 3)!], any: false))
        #expect(prechecked)
        #expect(base == .absent)
        // A field the precheck cannot vouch for (no such column) leaves validation to PostgreSQL.
        let put = try F.parse(
            "PUT", "/v1/terms/\(F.term)", body: #"{"colour": "red", "word": "w"}"#,
            headers: [("If-Match", "*")])
        guard case .update(_, .put, _, let star, let putPrechecked, let putBase) = put.kind else { Issue.record("\(put.kind)"); return }
        #expect(star == WritePreconditions(revisions: nil, any: true))
        #expect(!putPrechecked)
        #expect(putBase == .unread, "the SQL reads the base revision of a body it validates")
    }

    @Test func aPrecheckedBodyHandsItsBaseRevisionOn() throws {
        // jsonb keeps the last of a key given twice, and so does the base read here.
        for (body, expected) in [
            (#"{"word": "w", "revision": 7}"#, BaseRevision.given(Revision(value: 7)!)),
            (#"{"revision": 3, "word": "w", "revision": 0}"#, .given(Revision(value: 0)!)),
            (#"{"word": "w"}"#, .absent),
            (#"{"word": "w", "revision": 1.0}"#, .unread),  // not plain digits: not prechecked
            (#"{"word": "w", "revision": -1}"#, .unread),
        ] {
            let patch = try F.parse("PATCH", "/v1/terms/\(F.term)", body: body)
            guard case .update(_, .patch, _, _, _, let base) = patch.kind else { Issue.record("\(patch.kind)"); continue }
            #expect(base == expected, "\(body)")
        }
    }

    @Test func deleteTakesARevisionFromTheQuery() throws {
        let bare = try F.parse("DELETE", "/v1/terms/\(F.term)")
        guard case .update(_, .delete, let item, let none, false, .absent) = bare.kind else { Issue.record("\(bare.kind)"); return }
        #expect(item == "[{}]")
        #expect(none == WritePreconditions())
        let revised = try F.parse("DELETE", "/v1/terms/\(F.term)?revision=12")
        guard case .update(_, .delete, let withRevision, _, _, let base) = revised.kind else { Issue.record("\(revised.kind)"); return }
        #expect(withRevision == #"[{"revision":12}]"#)
        #expect(base == .given(Revision(value: 12)!))
    }

    // MARK: - Answers parsing decides before any database work

    @Test func noTokenIs401OnEveryRoute() {
        for (method, target) in [
            ("GET", "/v1/terms"), ("POST", "/v1/terms"), ("PATCH", "/v1/terms"), ("DELETE", "/v1/terms"),
            ("GET", "/v1/terms/\(F.term)"), ("PUT", "/v1/terms/\(F.term)"),
            ("PATCH", "/v1/terms/\(F.term)"), ("DELETE", "/v1/terms/\(F.term)"),
            ("GET", "/v1/nothing/\(F.term)"),
        ] {
            let problem = F.thrownProblem { _ = try F.parse(method, target, body: "{}", token: nil) }
            #expect(problem?.status == 401, "\(method) \(target)")
        }
    }

    @Test func reservedNamesAre404EvenBeforeTheToken() {
        for name in SchemaCatalog.reservedNames {
            let problem = F.thrownProblem { _ = try F.parse("GET", "/v1/\(name)/x", token: nil) }
            #expect(problem?.status == 404, "\(name)")
            #expect(problem?.code == .notFound)
        }
    }

    @Test func bodyProblemsAreAnsweredWithoutTheDatabase() {
        let cases: [(String, String, String?, String?, Int, String)] = [
            ("POST", "/v1/sets", #"{"title": "a"}"#, "text/plain", 415, "unsupported_media_type"),
            ("POST", "/v1/sets", #"{"title": "#, "application/json", 400, "invalid_json"),
            ("POST", "/v1/sets", "[{}, {}, {}, {}]", "application/json", 422, "too_many_items"),
            ("PATCH", "/v1/sets/\(F.set)", "[{}]", "application/json", 400, "bad_request"),
            ("PATCH", "/v1/sets", "{}", "application/json", 400, "bad_request"),
            ("DELETE", "/v1/sets", "{}", "application/json", 400, "bad_request"),
            ("PUT", "/v1/sets/\(F.set)", "\"text\"", "application/json", 400, "invalid_json"),
        ]
        for (method, target, body, type, status, code) in cases {
            let problem = F.thrownProblem { _ = try F.parse(method, target, body: body, contentType: type) }
            #expect(problem?.status == status, "\(method) \(target) \(body ?? "")")
            #expect(problem?.code.rawValue == code, "\(method) \(target) \(body ?? "")")
        }
        let tooMany = F.thrownProblem { _ = try F.parse("GET", "/v1/terms/a,b,c,d,e") }
        #expect(tooMany?.status == 422)
        #expect(tooMany?.code == .tooManyItems)
    }

    /// Path and query problems wait for the token check: a bad token must be
    /// 401 whatever else is wrong, so these come out as `.refused`.
    @Test func pathAndQueryProblemsAreRefusedAfterTheTokenCheck() throws {
        let cases: [(String, String, Int, String)] = [
            ("GET", "/v1/nothing", 404, "not_found"),
            ("GET", "/v1/nothing/\(F.term)", 404, "not_found"),
            ("GET", "/v1/terms/not-a-uuid", 404, "not_found"),
            ("PATCH", "/v1/terms/not-a-uuid", 404, "not_found"),
            ("PUT", "/v1/counters/12x", 404, "not_found"),
            ("DELETE", "/v1/terms/not-a-uuid", 404, "not_found"),
            ("DELETE", "/v1/terms/\(F.term)?revision=-1", 400, "bad_request"),
            ("DELETE", "/v1/terms/\(F.term)?revision=x", 400, "bad_request"),
            ("GET", "/v1/terms?colour=red", 400, "invalid_query"),
            ("GET", "/v1/terms?limit=5", 400, "invalid_query"),
            ("GET", "/v1/terms?set_id=nope", 400, "invalid_query"),
            ("GET", "/v1/terms?order=nothing", 400, "invalid_query"),
            ("GET", "/v1/terms?modified_since=-3", 400, "invalid_query"),
            ("GET", "/v1/counters?paging_token=abc", 404, "paging_token_not_found"),
            ("GET", "/v1/counters?page=2", 404, "paging_token_not_found"),
        ]
        for (method, target, status, code) in cases {
            let action = try F.parse(method, target, body: method == "PATCH" ? "{}" : nil)
            #expect(action.credential == hash)
            guard case .refused(let problem) = action.kind else {
                Issue.record("\(method) \(target): \(action.kind)")
                continue
            }
            #expect(problem.status == status, "\(method) \(target)")
            #expect(problem.code.rawValue == code, "\(method) \(target)")
        }
    }

    // MARK: - Validators

    @Test func ifModifiedSinceCountsOnlyWithoutIfNoneMatchAndOnlyOnReads() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        let get = ReadConditions(F.request("GET", "/v1/terms", headers: [("If-Modified-Since", date)]))
        #expect(get.modifiedSince == 784_111_777)
        #expect(get.notModified(etag: #""1""#, lastModifiedMs: 784_111_777_999))
        #expect(!get.notModified(etag: #""1""#, lastModifiedMs: 784_111_778_000))
        #expect(!get.notModified(etag: #""1""#, lastModifiedMs: nil))
        let both = ReadConditions(F.request("GET", "/v1/terms", headers: [("If-Modified-Since", date), ("If-None-Match", #""2""#)]))
        #expect(both.modifiedSince == nil)
        #expect(!both.notModified(etag: #""1""#, lastModifiedMs: 0))
        let post = ReadConditions(F.request("POST", "/v1/terms", headers: [("If-Modified-Since", date)]))
        #expect(post.modifiedSince == nil)
        #expect(ReadConditions(F.request("GET", "/", headers: [("If-None-Match", "*")])).noneMatch == .any)
    }
}
