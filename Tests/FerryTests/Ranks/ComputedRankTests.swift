import FerryRank
import Foundation
import Testing

extension Resources {
    /// `rank` on writes: validation of literal keys and the server-computed forms.
    @Suite struct ComputedRankTests {
        /// The set's live terms in server order, as `(word, rank)`.
        static func order(_ api: API, set: String) throws -> [(word: String, rank: String)] {
            let response = try api.call("GET", "/v1/terms?set_id=\(set)&order=rank&limit=1000")
            #expect(response.status == 200, "\(response.text)")
            let data = response.object["data"] as? [[String: Any]] ?? []
            return data.map { ($0["word"] as? String ?? "", $0["rank"] as? String ?? "") }
        }

        static func words(_ api: API, set: String) throws -> [String] { try order(api, set: set).map(\.word) }

        @Test func malformedAndOverlongRanksAnswer422WithTheReason() throws {
            let me = try ResourceFixture.user("rank")
            let set = try me.createSet().id
            for bad in ["ab!", "V0", "", String(repeating: "a", count: 129), "é"] {
                let response = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "x", "rank": bad])
                #expect(response.status == 422, "\(bad): \(response.text)")
                #expect(response.code == "validation_failed")
                let error = try #require(response.errors.first)
                #expect(error["field"] as? String == "rank")
                #expect((error["reason"] as? String ?? "").isEmpty == false)
            }
            let term = try me.createTerm(set: set, rank: "V")
            let patch = try me.call("PATCH", "/v1/terms/\(term.id)", json: ["rank": "V0", "revision": 1])
            #expect(patch.status == 422, "\(patch.text)")
            #expect(patch.errors.first?["field"] as? String == "rank")
            let put = try me.call("PUT", "/v1/terms/\(term.id)", json: ["set_id": set, "word": "w", "rank": "~", "revision": 1])
            #expect(put.status == 422, "\(put.text)")
            let bulk = try me.call("POST", "/v1/terms", json: [["set_id": set, "rank": "a"], ["set_id": set, "rank": "a0"]])
            #expect(bulk.status == 422, "\(bulk.text)")
            #expect(bulk.errors.first?["index"] as? Int == 1)
            #expect(try Self.words(me, set: set) == ["w"])
            // Wrong types stay the action's own validation.
            let number = try me.call("POST", "/v1/terms", json: ["set_id": set, "rank": 5])
            #expect(number.status == 422)
            #expect(number.errors.first?["reason"] as? String == "wrong_type", "\(number.text)")
            // An object that is no placement the server computes is a value it does not take.
            let forms: [[String: Any]] = [["between": [term.id, term.id]], ["after": term.id, "before": term.id], ["after": 1.5], [:]]
            for form in forms {
                let response = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "x", "rank": form])
                #expect(response.status == 422, "\(form): \(response.text)")
                #expect(response.errors.first?["field"] as? String == "rank", "\(form): \(response.text)")
                #expect(response.errors.first?["reason"] as? String == "invalid_value", "\(form): \(response.text)")
            }
            #expect(try Self.words(me, set: set) == ["w"])
        }

        @Test func firstLastAfterAndBeforeAreComputedWithFerryRank() throws {
            let me = try ResourceFixture.user("rank")
            let set = try me.createSet().id
            func create(_ word: String, _ rank: Any) throws -> [String: Any] {
                let response = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": word, "rank": rank])
                #expect(response.status == 201, "\(word): \(response.text)")
                return response.object
            }
            let b = try create("b", "last")  // empty set
            #expect(b["rank"] as? String == (try Rank.between(nil, nil)))
            let d = try create("d", "last")
            _ = try create("a", "first")
            let c = try create("c", ["after": b.id])
            _ = try create("c0", ["before": c.id])
            _ = try create("e", ["after": d.id])
            #expect(try Self.words(me, set: set) == ["a", "b", "c0", "c", "d", "e"])
            for (word, rank) in try Self.order(me, set: set) { #expect(throws: Never.self, "\(word)") { try Rank.validate(rank) } }
            // A neighbour that does not exist (or is in another set) is a 422 on rank.
            let other = try me.createSet().id
            let stranger = try me.createTerm(set: other)
            let bad = try me.call("POST", "/v1/terms", json: ["set_id": set, "rank": ["after": stranger.id]])
            #expect(bad.status == 422, "\(bad.text)")
            #expect(bad.errors.first?["field"] as? String == "rank")
            let missing = try me.call("POST", "/v1/terms", json: ["rank": "last", "word": "no set"])
            #expect(missing.status == 422, "\(missing.text)")
        }

        /// An offline client placed a row next to one that another device has since
        /// deleted: the new row takes the deleted row's place, not a 422.
        @Test func anAnchorDeletedMeanwhileStillPlacesTheRow() throws {
            let me = try ResourceFixture.user("rank")
            let set = try me.createSet().id
            var ids: [String: String] = [:]
            for word in ["a", "b", "c"] {
                let response = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": word, "rank": "last"])
                ids[word] = response.object.id
            }
            #expect(try me.call("DELETE", "/v1/terms/\(ids["b"]!)", headers: [("If-Match", "*")]).status == 200)
            let after = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "after-b", "rank": ["after": ids["b"]!]])
            #expect(after.status == 201, "\(after.text)")
            let before = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "before-b", "rank": ["before": ids["b"]!]])
            #expect(before.status == 201, "\(before.text)")
            let move = try me.call("PATCH", "/v1/terms/\(ids["c"]!)", json: ["rank": ["before": ids["b"]!]], headers: [("If-Match", "*")])
            #expect(move.status == 200, "\(move.text)")
            #expect(try Self.words(me, set: set) == ["a", "before-b", "c", "after-b"])
            // A row of another set stays a 422, deleted or not.
            let other = try me.createSet().id
            let stranger = try me.createTerm(set: other)
            #expect(try me.call("DELETE", "/v1/terms/\(stranger.id)", headers: [("If-Match", "*")]).status == 200)
            let elsewhere = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "x", "rank": ["after": stranger.id]])
            #expect(elsewhere.status == 422, "\(elsewhere.text)")
        }

        @Test func movesWithPatchAndPutKeepEveryOtherRow() throws {
            let me = try ResourceFixture.user("rank")
            let set = try me.createSet().id
            var ids: [String] = []
            for word in ["a", "b", "c", "d"] {
                let response = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": word, "rank": "last"])
                ids.append(response.object.id)
            }
            let before = try Self.order(me, set: set)
            let move = try me.call("PATCH", "/v1/terms/\(ids[3])", json: ["rank": ["before": ids[1]], "revision": 1])
            #expect(move.status == 200, "\(move.text)")
            #expect(try Self.words(me, set: set) == ["a", "d", "b", "c"])
            let first = try me.call("PUT", "/v1/terms/\(ids[2])", json: ["set_id": set, "word": "c", "rank": "first", "revision": 1])
            #expect(first.status == 200, "\(first.text)")
            let last = try me.call("PATCH", "/v1/terms/\(ids[0])", json: ["rank": "last"], headers: [("If-Match", "\"1\"")])
            #expect(last.status == 200, "\(last.text)")
            let after = try Self.order(me, set: set)
            #expect(after.map(\.word) == ["c", "d", "b", "a"])
            // Only the moved rows changed rank.
            #expect(after.first { $0.word == "b" }?.rank == before.first { $0.word == "b" }?.rank)
            // A row is not its own neighbour: moving it after itself names no row.
            let selfMove = try me.call("PATCH", "/v1/terms/\(ids[1])", json: ["rank": ["after": ids[1]], "revision": 1])
            #expect(selfMove.status == 422, "\(selfMove.text)")
            #expect(selfMove.errors.first?["reason"] as? String == "not_found", "an anchor naming no row is a reference to none")
            // A row that does not exist is a 404, whatever the rank form.
            let nowhere = try me.call("PATCH", "/v1/terms/\(UUID().uuidString.lowercased())", json: ["rank": ["after": ids[0]], "revision": 1])
            #expect(nowhere.status == 404, "\(nowhere.text)")
            // A stale revision still conflicts (the computed rank does not bypass preconditions).
            let stale = try me.call("PATCH", "/v1/terms/\(ids[3])", json: ["rank": "first", "word": "D", "revision": 1])
            #expect(stale.status == 409, "\(stale.text)")
            #expect(try Self.words(me, set: set) == ["c", "d", "b", "a"])
            // Bulk PATCH places items in body order, each seeing the ones before it.
            let current = try me.call("GET", "/v1/terms?set_id=\(set)&order=rank").object["data"] as? [[String: Any]] ?? []
            let byWord = Dictionary(uniqueKeysWithValues: current.map { ($0["word"] as? String ?? "", $0) })
            let bulk = try me.call(
                "PATCH", "/v1/terms",
                json: [
                    ["id": byWord["b"]!.id, "revision": byWord["b"]!.revision, "rank": "first"],
                    ["id": byWord["a"]!.id, "revision": byWord["a"]!.revision, "rank": ["after": byWord["b"]!.id]],
                ])
            #expect(bulk.status == 200, "\(bulk.text)")
            #expect(try Self.words(me, set: set) == ["b", "a", "c", "d"])
        }

        @Test func equalRanksOrderByIdAndAfterGoesPastTheRun() throws {
            let me = try ResourceFixture.user("rank")
            let set = try me.createSet().id
            let prefix = String(UUID().uuidString.prefix(8)).lowercased()
            let ids = (1...3).map { prefix + "-0000-4000-8000-00000000000\($0)" }  // ascending, so ties order e0, e1, e2
            for (index, id) in ids.enumerated() {
                let response = try me.call("POST", "/v1/terms", json: ["id": id, "set_id": set, "word": "e\(index)", "rank": "V"])
                #expect(response.status == 201, "\(response.text)")
            }
            _ = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "z", "rank": "k"])
            let between = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "after0", "rank": ["after": ids[0]]])
            #expect(between.status == 201, "\(between.text)")
            let before = try me.call("POST", "/v1/terms", json: ["set_id": set, "word": "before2", "rank": ["before": ids[2]]])
            #expect(before.status == 201, "\(before.text)")
            let final = try Self.order(me, set: set)
            #expect(final.map(\.word) == ["before2", "e0", "e1", "e2", "after0", "z"], "\(final)")
        }

        @Test func multiCreateWithLastKeepsBodyOrderAndRetriesStayIdentical() throws {
            let me = try ResourceFixture.user("rank")
            let set = try me.createSet().id
            let items: [[String: Any]] = (0..<5).map { ["id": UUID().uuidString.lowercased(), "set_id": set, "word": "w\($0)", "rank": "last"] }
            let created = try me.call("POST", "/v1/terms", json: items)
            #expect(created.status == 201, "\(created.text)")
            #expect(try Self.words(me, set: set) == ["w0", "w1", "w2", "w3", "w4"])
            let retry = try me.call("POST", "/v1/terms", json: items)
            #expect(retry.status == 200, "\(retry.text)")
            #expect(try Self.words(me, set: set) == ["w0", "w1", "w2", "w3", "w4"])
            let mixed = try me.call(
                "POST", "/v1/terms",
                json: [
                    ["id": UUID().uuidString.lowercased(), "set_id": set, "word": "x", "rank": ["after": items[1]["id"]!]],
                    ["set_id": set, "word": "y", "rank": "first"],
                ])
            #expect(mixed.status == 201, "\(mixed.text)")
            #expect(try Self.words(me, set: set) == ["y", "w0", "w1", "x", "w2", "w3", "w4"])
        }
    }
}
