import FerryHTTP
import FerryRank
import Testing

@testable import Ferry

/// The pure parts of ordered rows and batches: rank forms, key placement, problem splicing.
@Suite struct RankedListTests {
    @Test func formsParseAsTheContractSpells() {
        #expect(RankForm(json: "first") == .first)
        #expect(RankForm(json: "last") == .last)
        #expect(RankForm(json: "abc") == .key("abc"))
        #expect(RankForm(json: ["after": "x"]) == .after("x"))
        #expect(RankForm(json: ["before": 7]) == .before("7"))
        #expect(RankForm(json: ["after": "x", "before": "y"]) == nil)
        #expect(RankForm(json: ["beside": "x"]) == nil)
        #expect(RankForm(json: 5) == nil)
        #expect(RankForm(json: "first")?.isComputed == true)
        #expect(RankForm(json: "V")?.isComputed == false)
    }

    @Test func placementFollowsTheNeighbours() throws {
        var list = RankedList(rows: [("a", "F"), ("b", "V"), ("c", "V"), ("d", "k")])
        let afterA = try list.key(for: .after("a"))
        #expect(RankedList.precedes("F", afterA) && RankedList.precedes(afterA, "V"))
        // Next to a run of equal ranks: after the whole run, or before it.
        let afterB = try list.key(for: .after("b"))
        #expect(RankedList.precedes("V", afterB) && RankedList.precedes(afterB, "k"))
        let beforeC = try list.key(for: .before("c"))
        #expect(RankedList.precedes("F", beforeC) && RankedList.precedes(beforeC, "V"))
        #expect(RankedList.precedes(try list.key(for: .first), "F"))
        #expect(RankedList.precedes("k", try list.key(for: .last)))
        #expect(throws: RankError.self) { try list.key(for: .after("zz")) }
        #expect(throws: RankError.self) { try list.key(for: .key("V0")) }
        list.insert(id: "e", rank: "V")
        #expect(list.rows.map(\.id) == ["a", "b", "c", "e", "d"])
        list.remove(id: "b")
        #expect(list.rows.map(\.id) == ["a", "c", "e", "d"])
        #expect(try RankedList().key(for: .last) == (try Rank.between(nil, nil)))
    }

    @Test func repeatedInsertsAfterOneRowStayShort() throws {
        var list = RankedList(rows: [("a", "V"), ("z", "W")])
        for n in 0..<1000 {
            let key = try list.key(for: .after("a"))
            list.insert(id: "n\(n)", rank: key)
        }
        #expect(list.rows.map(\.rank).map(\.count).max() ?? 0 < 50)
        #expect(list.rows.first?.id == "a")
        #expect(list.rows.last?.id == "z")
        // Each insert went right after "a": the newest first.
        #expect(list.rows[1].id == "n999")
    }

    @Test func aFailingOperationsProblemGainsItsIndex() {
        let problem = Problem(409, .revisionConflict, "stale").response
        let failed = BatchRoute.failure(problem, index: 3)
        guard case .bytes(let bytes) = failed.body else { Issue.record("not bytes"); return }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasSuffix(#","operation_index":3}"#))
        #expect(failed.status == 409)
        let empty = BatchRoute.failure(HTTPResponse(status: 404, bytes: Array("{}".utf8)), index: 0)
        guard case .bytes(let emptyBytes) = empty.body else { Issue.record("not bytes"); return }
        #expect(String(decoding: emptyBytes, as: UTF8.self) == #"{"operation_index":0}"#)
    }
}

/// The byte scan that lets valid literal ranks skip JSON decoding.
@Suite struct RankScanTests {
    func scan(_ text: String) -> RankScan { RankScan(Array(text.utf8)) }

    @Test func settlesTheCommonCasesAndDefersTheRest() {
        #expect(scan(#"{"word": "x"}"#) == .none)
        #expect(scan(#"{"word": "rank", "definition": "rank"}"#) == .none)
        #expect(scan(#"{"rank": "V", "word": "x"}"#) == .valid)
        #expect(scan(#"[{"rank" : "a"}, {"rank":"b1"}]"#) == .valid)
        #expect(scan(#"{"rank": "first"}"#) == .needsParse)
        #expect(scan(#"{"rank": "last"}"#) == .needsParse)
        #expect(scan(#"{"rank": {"after": "x"}}"#) == .needsParse)
        #expect(scan(#"{"rank": "V0"}"#) == .needsParse)
        #expect(scan(#"{"rank": ""}"#) == .needsParse)
        #expect(scan(#"{"rank": 5}"#) == .needsParse)
        #expect(scan(#"{"rank": "a\"b"}"#) == .needsParse)
        #expect(scan(#"{"r\u0061nk": "V0"}"#) == .needsParse)
        #expect(scan(#"{"rank": "V", "x": "a\"rank\": \"V0"}"#) == .valid)
        #expect(scan(#"{"rank": "V"#) == .needsParse)  // truncated: the action reports it
    }
}
