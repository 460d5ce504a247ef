import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// A refused write answers in Ferry's words: a stable `reason` per field and
    /// a detail Ferry wrote, never PostgreSQL's message, which names tables,
    /// constraints and policies and changes between releases.
    @Suite struct NoDatabaseWordingTests {
        static let databaseWords = [
            "violates", "constraint", "relation", "policy", "row-level", "row level", "duplicate key", "syntax",
            "sqlstate", "app.", "ferry.", "pkey", "_idx", "_length", "invalid input", "foreign key", "null value",
        ]

        @Test func everyKindOfRefusedWriteAnswersInFerrysWords() throws {
            let me = try ResourceFixture.user("words")
            let other = try ResourceFixture.user("words_other")
            let mine = try me.createSet()
            let theirs = try other.createSet()
            let mineID = try #require(mine["id"] as? String), theirsID = try #require(theirs["id"] as? String)
            let folder = try me.call("POST", "/v1/folders", json: ["name": "f"]).object
            let folderID = try #require(folder["id"] as? String)
            #expect(try me.call("POST", "/v1/folder_sets", json: ["folder_id": folderID, "set_id": mineID]).status == 201)
            let long = String(repeating: "t", count: 600)

            let refusals: [(String, TestHTTPClient.Response)] = [
                ("title over its limit", try me.call("POST", "/v1/study_sets", json: ["title": long])),
                ("empty title", try me.call("POST", "/v1/study_sets", json: ["title": ""])),
                ("missing title", try me.call("POST", "/v1/study_sets", json: ["description": "d"])),
                ("a second row for the same pair", try me.call("POST", "/v1/folder_sets", json: ["folder_id": folderID, "set_id": mineID])),
                (
                    "the same pair twice in one bulk create",
                    try me.call(
                        "POST", "/v1/folder_sets",
                        json: [
                            ["folder_id": folderID, "set_id": theirsID], ["folder_id": folderID, "set_id": theirsID],
                        ])
                ),
                ("a term in another user's set", try me.call("POST", "/v1/terms", json: ["set_id": theirsID, "word": "w", "rank": "U"])),
                (
                    "a link to a set the caller cannot read",
                    try me.call("POST", "/v1/folder_sets", json: ["folder_id": folderID, "set_id": theirsID])
                ),
                ("a reference that is not an id", try me.call("POST", "/v1/terms", json: ["set_id": "nope", "word": "w", "rank": "U"])),
                (
                    "a reference to no row",
                    try me.call("POST", "/v1/terms", json: ["set_id": UUID().uuidString.lowercased(), "word": "w", "rank": "U"])
                ),
                ("bulk with one bad item", try me.call("POST", "/v1/study_sets", json: [["title": "ok"], ["title": long]])),
                ("patch over the limit", try me.call("PATCH", "/v1/study_sets/\(mineID)", json: ["title": long], headers: [("If-Match", "*")])),
                (
                    "put without a required field",
                    try me.call("PUT", "/v1/study_sets/\(mineID)", json: ["description": "d"], headers: [("If-Match", "*")])
                ),
                ("body that is not JSON", try me.call("POST", "/v1/study_sets", body: Array(#"{"title": "a\u0000"}"#.utf8))),
                ("filter value that does not fit", try me.call("GET", "/v1/terms?set_id=nope")),
                (
                    "batch with a refused write",
                    try me.call(
                        "POST", "/v1/batch",
                        json: [
                            "operations": [
                                ["method": "POST", "path": "/v1/study_sets", "body": ["title": "fine"]],
                                ["method": "POST", "path": "/v1/study_sets", "body": ["title": long]],
                            ]
                        ])
                ),
            ]
            for (what, response) in refusals {
                #expect((400..<500).contains(response.status), "\(what): \(response.status) \(response.text)")
                let text = response.text.lowercased()
                for word in Self.databaseWords where text.contains(word) {
                    Issue.record("\(what): the answer says \"\(word)\": \(response.text)")
                }
                for entry in response.errors {
                    #expect(entry["reason"] is String || entry["code"] as? String != "validation_failed", "\(what): \(entry)")
                }
            }
        }
    }
}
