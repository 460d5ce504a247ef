import Foundation
import Testing

extension Resources {
    /// `GET /v1/<r>`: filters, order, limit, tombstones, collection ETags.
    @Suite struct IndexTests {
        @Test func filtersOrderAndLimit() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let other = try me.createSet()
            _ = try me.createTerm(set: set.id, word: "b", rank: "B")
            _ = try me.createTerm(set: set.id, word: "a", rank: "C")
            _ = try me.createTerm(set: set.id, word: "c", rank: "A")
            _ = try me.createTerm(set: other.id, word: "z", rank: "A")
            let byRank = try me.call("GET", "/v1/terms?set_id=\(set.id)")
            #expect(byRank.status == 200)
            let data = byRank.object["data"] as? [[String: Any]] ?? []
            #expect(data.map { $0["word"] as? String } == ["c", "b", "a"], "ranked resources default to (rank, id)")
            let paging = byRank.object["paging"] as? [String: Any] ?? [:]
            #expect(paging["total"] as? Int == 3)
            #expect(paging["page"] as? Int == 1)
            #expect(paging["pages"] as? Int == 1)
            #expect(paging["token"] is NSNull)
            #expect(paging["next"] is NSNull)
            #expect(paging["complete"] == nil)

            let byWord = try me.call("GET", "/v1/terms?set_id=\(set.id)&order=word.desc")
            #expect((byWord.object["data"] as? [[String: Any]])?.map { $0["word"] as? String } == ["c", "b", "a"])
            let inList = try me.call("GET", "/v1/terms?word=a,z&order=word")
            #expect((inList.object["data"] as? [[String: Any]])?.map { $0["word"] as? String } == ["a", "z"])
            let limited = try me.call("GET", "/v1/terms?set_id=\(set.id)&limit=2")
            #expect((limited.object["data"] as? [Any])?.count == 2)
            let limitedPaging = limited.object["paging"] as? [String: Any] ?? [:]
            #expect(limitedPaging["total"] as? Int == 3)
            #expect(limitedPaging["pages"] as? Int == 2)
            #expect(limitedPaging["token"] is String, "a result longer than one page is snapshotted")
            #expect(limitedPaging["next"] is String)
        }

        /// A value with a comma: in double quotes it is one value, where every comma split
        /// the list before (no term "Smith, John" could be filtered for).
        @Test func aQuotedFilterValueMayHoldCommasAndQuotes() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            for word in ["Smith, John", "Smith", " John", #"say "hi", \ go"#, "plain"] {
                _ = try me.createTerm(set: set.id, word: word)
            }
            func words(_ filter: String) throws -> [String] {
                let encoded = filter.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? filter
                let response = try me.call("GET", "/v1/terms?set_id=\(set.id)&order=word&word=\(encoded)")
                #expect(response.status == 200, "\(filter): \(response.text)")
                return (response.object["data"] as? [[String: Any]] ?? []).compactMap { $0["word"] as? String }
            }
            #expect(try words(#""Smith, John""#) == ["Smith, John"])
            #expect(try words("Smith, John") == [" John", "Smith"], "unquoted, the comma still splits")
            #expect(try words(#""Smith, John",plain"#) == ["Smith, John", "plain"])
            #expect(try words(#"plain,"Smith, John""#) == ["Smith, John", "plain"])
            #expect(try words(#""say \"hi\", \\ go""#) == [#"say "hi", \ go"#])
            #expect(try words(#"5"x"#).isEmpty, "a quote inside an unquoted value is taken as it is")
            // The same for a uuid list; and a quote left open or text after one is a 400 naming the column.
            #expect(try me.call("GET", "/v1/terms?set_id=%22\(set.id)%22,\(set.id)").status == 200)
            for bad in [#""Smith"#, #""Smith"x"#, #""a\"#] {
                let encoded = bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? bad
                let response = try me.call("GET", "/v1/terms?word=\(encoded)")
                #expect(response.status == 400 && response.code == "invalid_query", "\(bad): \(response.text)")
                #expect((response.object["detail"] as? String)?.contains("word") == true, "\(bad): \(response.text)")
            }
        }

        @Test func invalidQueriesAnswer400() throws {
            let me = try ResourceFixture.user()
            for query in [
                "colour=red", "order=colour", "limit=0", "limit=1001", "limit=x", "include_deleted=maybe",
                "modified_since=yesterday", "set_id=not-a-uuid", "revision=abc",
            ] {
                let response = try me.call("GET", "/v1/terms?\(query)")
                #expect(response.status == 400, "\(query): \(response.text)")
                #expect(response.code == "invalid_query", "\(query)")
            }
        }

        @Test func tombstonesAndModifiedSince() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let keep = try me.createTerm(set: set.id, word: "keep")
            let gone = try me.createTerm(set: set.id, word: "gone")
            #expect(try me.call("DELETE", "/v1/terms/\(gone.id)?revision=1").status == 200)
            let live = try me.call("GET", "/v1/terms?set_id=\(set.id)")
            #expect((live.object["data"] as? [[String: Any]])?.map(\.id) == [keep.id])
            let all = try me.call("GET", "/v1/terms?set_id=\(set.id)&include_deleted=true")
            let rows = all.object["data"] as? [[String: Any]] ?? []
            #expect(rows.count == 2)
            #expect(rows.first { $0.id == gone.id }?["word"] == nil, "a tombstone")
            let since = (keep["last_modified"] as? Int ?? 0)
            let changed = try me.call("GET", "/v1/terms?set_id=\(set.id)&modified_since=\(since)")
            #expect((changed.object["data"] as? [[String: Any]])?.map(\.id) == [gone.id], "tombstones included")
        }

        @Test func collectionETagChangesOnAddEditDeleteAndMoveOut() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let a = try me.createTerm(set: set.id, word: "match")
            let path = "/v1/terms?set_id=\(set.id)&word=match"
            var etag = try #require(try me.call("GET", path).header("ETag"))
            func expectChanged(_ what: String) throws {
                #expect(try me.call("GET", path, headers: [("If-None-Match", etag)]).status == 304, "unchanged before \(what)")
                return
            }
            func next(_ what: String) throws {
                let response = try me.call("GET", path, headers: [("If-None-Match", etag)])
                #expect(response.status == 200, "ETag must change on \(what)")
                etag = try #require(response.header("ETag"))
            }
            try expectChanged("add")
            let b = try me.createTerm(set: set.id, word: "match")
            try next("add")
            #expect(try me.call("PATCH", "/v1/terms/\(a.id)", json: ["definition": "new", "revision": 1]).status == 200)
            try next("edit")
            #expect(try me.call("DELETE", "/v1/terms/\(b.id)?revision=1").status == 200)
            try next("delete")
            #expect(try me.call("PATCH", "/v1/terms/\(a.id)", json: ["word": "other", "revision": 2]).status == 200)
            try next("move-out")
            #expect(try me.call("GET", path, headers: [("If-None-Match", etag)]).status == 304)
            #expect(try me.call("HEAD", path, headers: [("If-None-Match", etag)]).status == 304)
        }
    }
}
