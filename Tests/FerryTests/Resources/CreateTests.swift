import Foundation
import Testing

extension Resources {
    /// `POST /v1/<r>`: single, multi-create, retries, validation.
    @Suite struct CreateTests {
        @Test func singleCreateAnswers201WithLocationAndETag() throws {
            let me = try ResourceFixture.user()
            let response = try me.call("POST", "/v1/study_sets", json: ["title": "T", "description": "D"])
            #expect(response.status == 201)
            let row = response.object
            #expect(row["title"] as? String == "T")
            #expect(row["creator_id"] as? String == me.userID)
            #expect(row.revision == 1)
            #expect(row["is_deleted"] as? Bool == false)
            #expect((row["last_modified"] as? Int ?? 0) > 1_600_000_000_000)
            #expect(row.keys.allSatisfy { !$0.hasPrefix("_ferry") })
            #expect(response.header("Location") == "/v1/study_sets/\(row.id)")
            #expect(response.header("ETag") == "\"1\"")
            #expect(response.header("Content-Type") == "application/json")
        }

        @Test func clientIDAndEchoedSyncFieldsAreAccepted() throws {
            let me = try ResourceFixture.user()
            let id = UUID().uuidString.lowercased()
            let response = try me.call(
                "POST", "/v1/study_sets",
                json: [
                    "id": id, "title": "T", "revision": 99, "last_modified": 5, "is_deleted": true,
                ])
            #expect(response.status == 201, "\(response.text)")
            #expect(response.object.id == id)
            #expect(response.object.revision == 1)
            #expect(response.object["is_deleted"] as? Bool == false)
            #expect(response.object["description"] as? String == "", "a left-out field takes its default")
        }

        @Test func retriesIdenticalAnswer200DifferentAnswer409() throws {
            let me = try ResourceFixture.user()
            let id = UUID().uuidString
            let body: [String: Any] = ["id": id, "title": "Same", "description": "x"]
            #expect(try me.call("POST", "/v1/study_sets", json: body).status == 201)
            let retry = try me.call("POST", "/v1/study_sets", json: body)
            #expect(retry.status == 200)
            #expect(retry.object.id == id.lowercased())
            #expect(retry.object.revision == 1)
            let subset = try me.call("POST", "/v1/study_sets", json: ["id": id, "title": "Same"])
            #expect(subset.status == 200, "only the fields sent are compared")
            let different = try me.call("POST", "/v1/study_sets", json: ["id": id, "title": "Other"])
            #expect(different.status == 409)
            #expect(different.code == "already_exists")
            #expect((different.object["current"] as? [String: Any])?["title"] as? String == "Same")
        }

        @Test func anotherUsersIDIsAConflictThatRevealsNothing() throws {
            let alice = try ResourceFixture.user("alice")
            let bob = try ResourceFixture.user("bob")
            let set = try alice.createSet("private")
            let response = try bob.call("POST", "/v1/study_sets", json: ["id": set.id, "title": "private"])
            #expect(response.status == 409)
            #expect(response.code == "already_exists")
            #expect(response.object["current"] == nil)
            #expect(!response.text.contains("private"))
        }

        @Test func multiCreateReturnsRowsInOrder() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let items = (0..<5).map { ["set_id": set.id, "word": "w\($0)"] }
            let response = try me.call("POST", "/v1/terms", json: items)
            #expect(response.status == 201)
            #expect(response.array.map { $0["word"] as? String } == (0..<5).map { "w\($0)" })
            #expect(response.header("Location") == nil)
        }

        @Test func thousandItemCreateIsAtomic() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            var items: [[String: Any]] = (0..<1000).map { ["set_id": set.id, "word": "w\($0)", "rank": "U\($0)V"] }
            items[999]["word"] = String(repeating: "x", count: 10_001)  // the domain app.term_word's CHECK
            let bad = try me.call("POST", "/v1/terms", json: items)
            #expect(bad.status == 422, "\(bad.text.prefix(300))")
            #expect(bad.code == "validation_failed")
            #expect(bad.errors.count == 1)
            #expect(bad.errors.first?["index"] as? Int == 999)
            #expect(bad.errors.first?["field"] as? String == "word")
            #expect(bad.errors.first?["reason"] as? String == "check_violation")
            let none = try me.call("GET", "/v1/terms?set_id=\(set.id)")
            #expect((none.object["data"] as? [Any])?.count == 0)

            items[999]["word"] = "fine"
            let good = try me.call("POST", "/v1/terms", json: items)
            #expect(good.status == 201)
            #expect(good.array.count == 1000)
            let all = try me.call("GET", "/v1/terms?set_id=\(set.id)&limit=1000")
            #expect(((all.object["paging"] as? [String: Any])?["total"] as? Int) == 1000)
        }

        @Test func moreThanMaxBulkItemsIsRefused() throws {
            let me = try ResourceFixture.user()
            let items = (0..<1001).map { _ in ["title": "t"] }
            let response = try me.call("POST", "/v1/study_sets", json: items)
            #expect(response.status == 422)
            #expect(response.code == "too_many_items")
        }

        @Test func unknownFieldsAreListed() throws {
            let me = try ResourceFixture.user()
            let response = try me.call("POST", "/v1/study_sets", json: ["title": "t", "colour": "red", "_ferry_xid": 1])
            #expect(response.status == 422)
            #expect(response.code == "unknown_field")
            #expect(Set(response.errors.compactMap { $0["field"] as? String }) == ["colour", "_ferry_xid"])
        }

        @Test func wrongTypesNullsAndMissingFieldsNameEachField() throws {
            let me = try ResourceFixture.user()
            let response = try me.call("POST", "/v1/terms", json: ["set_id": "not-a-uuid", "word": 5, "definition": NSNull()])
            #expect(response.status == 422)
            #expect(response.code == "validation_failed")
            var reasons: [String: String] = [:]
            for error in response.errors { reasons[error["field"] as? String ?? "?"] = error["reason"] as? String }
            // A string that is no uuid is of the right kind and does not fit: invalid_value.
            #expect(reasons == ["set_id": "invalid_value", "word": "wrong_type", "definition": "not_null"])
            let kinds = try me.call("POST", "/v1/terms", json: ["set_id": 5, "word": "w", "rank": "last"])
            #expect(kinds.errors.first?["reason"] as? String == "wrong_type", "\(kinds.text)")
            let id = try me.call("POST", "/v1/study_sets", json: ["id": "zzz", "title": "t"])
            #expect(id.errors.first?["reason"] as? String == "invalid_value", "\(id.text)")
            #expect(id.errors.first?["field"] as? String == "id")
            let missing = try me.call("POST", "/v1/study_sets", json: ["description": "no title"])
            #expect(missing.status == 422)
            #expect(missing.errors.first?["field"] as? String == "title")
            #expect(missing.errors.first?["reason"] as? String == "required")
        }

        /// A single write's refused entry names its row, as a bulk item's does: the path's
        /// id, or the id a create sent (null when the database makes it).
        @Test func aSingleWritesRefusalNamesItsRowsID() throws {
            let me = try ResourceFixture.user()
            let id = UUID().uuidString.lowercased()
            let created = try me.call("POST", "/v1/study_sets", json: ["id": id, "title": ""])
            #expect(created.status == 422 && created.errors.first?["reason"] as? String == "check_violation", "\(created.text)")
            #expect(created.errors.first?["id"] as? String == id, "\(created.text)")
            let anonymous = try me.call("POST", "/v1/study_sets", json: ["title": ""])
            #expect(anonymous.errors.count == 1 && anonymous.errors.first?["id"] is NSNull, "\(anonymous.text)")

            let set = try me.createSet()
            let patched = try me.call("PATCH", "/v1/study_sets/\(set.id)", json: ["title": ""], headers: [("If-Match", "*")])
            #expect(patched.status == 422 && patched.errors.first?["field"] as? String == "title", "\(patched.text)")
            #expect(patched.errors.first?["id"] as? String == set.id, "\(patched.text)")
            let put = try me.call("PUT", "/v1/study_sets/\(set.id)", json: ["title": ""], headers: [("If-Match", "*")])
            #expect(put.status == 422 && put.errors.first?["id"] as? String == set.id, "\(put.text)")
        }

        @Test func constraintViolationsNameTheField() throws {
            let me = try ResourceFixture.user()
            let check = try me.call("POST", "/v1/study_sets", json: ["title": ""])
            #expect(check.status == 422)
            #expect(check.errors.first?["field"] as? String == "title")
            #expect(check.errors.first?["reason"] as? String == "check_violation")

            let set = try me.createSet()
            let folder = try me.call("POST", "/v1/folders", json: ["name": "F"]).object
            let link: [String: Any] = ["folder_id": folder.id, "set_id": set.id]
            #expect(try me.call("POST", "/v1/folder_sets", json: link).status == 201)
            let duplicate = try me.call("POST", "/v1/folder_sets", json: link)
            #expect(duplicate.status == 422)
            #expect(duplicate.errors.first?["reason"] as? String == "unique_violation")
            // One error about the pair, not one per column (issue 48).
            #expect(duplicate.errors.count == 1, "\(duplicate.text)")
            #expect(duplicate.errors.first?["field"] is NSNull)
            #expect(Set(duplicate.errors.first?["fields"] as? [String] ?? []) == ["folder_id", "set_id"])
            let bulk = try me.call("POST", "/v1/folder_sets", json: [link])
            #expect(bulk.status == 422 && bulk.errors.count == 1, "\(bulk.text)")
            #expect(Set(bulk.errors.first?["fields"] as? [String] ?? []) == ["folder_id", "set_id"])

            let dangling = try me.call("POST", "/v1/terms", json: ["set_id": UUID().uuidString])
            #expect(dangling.status == 422)
            #expect(dangling.errors.first?["field"] as? String == "set_id")
            #expect(dangling.errors.first?["reason"] as? String == "not_found")
        }
    }
}
