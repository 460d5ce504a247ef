@testable import Ferry
import Foundation
import Testing

extension Resources {
    /// Answers are compact JSON: PostgreSQL's `" : "` and `", "` spacing is gone.
    @Suite struct CompactJSONTests {
        @Test(arguments: [
            (#"{"a" : 1, "b" : [1, 2]}"#, #"{"a":1,"b":[1,2]}"#),
            ("[{\"a\":1}, \n {\"a\":2}]", #"[{"a":1},{"a":2}]"#),
            (#" {"s" : "keep : these, spaces", "e" : "a \" quote, and \\"} "#, #"{"s":"keep : these, spaces","e":"a \" quote, and \\"}"#),
            (#"{"t":"tab\tnot raw", "u" : "\\\" still in"}"#, #"{"t":"tab\tnot raw","u":"\\\" still in"}"#),
        ])
        func spacingOutsideStringsGoes(input: String, expected: String) {
            let compact = CompactJSON.compacted(Array(input.utf8)).map { String(decoding: $0, as: UTF8.self) }
            #expect(compact == expected)
        }

        @Test func compactBodiesAreNotCopied() {
            #expect(CompactJSON.compacted(Array(#"{"a":"b c"}"#.utf8)) == nil)
        }

        /// Rows, pages, the feed, bulk answers and problems carrying rows, over a real server.
        /// The fixture's strings have no spaces, so a compact body has none at all.
        @Test func everyAnswerIsCompact() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet("Set")
            let terms = try me.call("POST", "/v1/terms", json: (0..<3).map { ["set_id": set.id, "word": "w\($0)", "definition": "d", "rank": "U"] })
            let ids = terms.array.map(\.id)
            #expect(ids.count == 3)
            #expect(try me.call("DELETE", "/v1/terms/\(ids[2])?revision=1").status == 200)
            var answers = [
                ("bulk create", terms),
                ("read", try me.call("GET", "/v1/study_sets/\(set.id)")),
                ("multi-show", try me.call("GET", "/v1/terms/\(ids[0]),\(ids[1])")),
                ("index", try me.call("GET", "/v1/terms?set_id=\(set.id)&include_deleted=true")),
                ("paged index", try me.call("GET", "/v1/terms?set_id=\(set.id)&limit=1")),
                ("changes", try me.call("GET", "/v1/changes")),
                ("me", try me.call("GET", "/v1/auth/me")),
                ("patch", try me.call("PATCH", "/v1/terms/\(ids[0])", json: ["definition": "e"], headers: [("If-Match", "\"1\"")])),
            ]
            for (name, response) in answers {
                #expect(response.status < 300, "\(name): \(response.text)")
                #expect(!response.body.contains(0x20) && !response.body.contains(0x0A), "\(name): \(response.text)")
            }
            // Answers with free text (problem details, the batch's header dates) have spaces
            // inside strings; none of PostgreSQL's spacing may be left between tokens.
            answers = [
                ("batch", try me.call("POST", "/v1/batch", json: ["operations": [["method": "GET", "path": "/v1/terms/\(ids[1])"]]])),
                ("409 with current", try me.call("PATCH", "/v1/terms/\(ids[1])", json: ["definition": "x", "revision": 0])),
                ("410 tombstone", try me.call("GET", "/v1/terms/\(ids[2])")),
                ("bulk 422", try me.call("POST", "/v1/terms", json: [["word": "x"], ["set_id": set.id]])),
            ]
            for (name, response) in answers {
                #expect(response.status >= 400 || name == "batch", "\(name): \(response.text)")
                for spacing in ["\" : ", "\": ", ", \"", ", {", "\n"] {
                    #expect(!response.text.contains(spacing), "\(name): \(response.text)")
                }
            }
        }
    }
}
