import Foundation
import Testing

extension Resources {
    /// Bodies that are not what a write expects: each gets a clear 4xx.
    @Suite struct BodyTests {
        @Test func malformedAndTruncatedJSONIs400() throws {
            let me = try ResourceFixture.user()
            for text in [
                "{\"title\": ", "{\"title\": \"x\"", "[{\"title\": \"x\"}", "{\"title\": tru}", "", "   ",
                "{\"title\": \"x\"}, {\"title\": \"y\"}", "{\"title\": \"x\"}]", "\"just a string\"", "42",
                "{\"title\": \"\\u0000\"}", "{\"title\": \"bad \\x escape\"}",
            ] {
                let response = try me.call("POST", "/v1/study_sets", body: Array(text.utf8))
                #expect(response.status == 400, "\(text): \(response.text)")
                #expect(response.code == "invalid_json", "\(text)")
            }
            let count = try me.server.ownerQuery("SELECT count(*) FROM app.study_sets WHERE creator_id = $1", [me.userID])
            #expect(count.rows.first?[0] == "0")
            // A bulk item that is no object is named by its index.
            let scalars = try me.call("POST", "/v1/study_sets", body: Array("[1, 2]".utf8))
            #expect(scalars.status == 422, "\(scalars.text)")
            #expect(scalars.errors.map { $0["reason"] as? String } == ["not_an_object", "not_an_object"])
            #expect(scalars.errors.map { $0["index"] as? Int } == [0, 1])
            #expect((scalars.errors.first?["detail"] as? String)?.contains("not a JSON object") == true, "\(scalars.text)")
            // The cause is named: U+0000, a lone surrogate (PostgreSQL's words).
            let nul = try me.call("POST", "/v1/study_sets", body: Array(#"{"title": "a\u0000b"}"#.utf8))
            #expect((nul.object["detail"] as? String)?.contains("U+0000") == true, "\(nul.text)")
            let surrogate = try me.call("POST", "/v1/study_sets", body: Array(#"{"title": "a\udc00b"}"#.utf8))
            #expect(surrogate.code == "invalid_json")
            #expect((surrogate.object["detail"] as? String)?.contains("surrogate") == true, "\(surrogate.text)")
        }

        /// Single PATCH bodies whose fields the Swift pre-check reads as valid but which
        /// PostgreSQL does not take as JSON (a leading zero, broken or NUL escapes in a
        /// string) take the fast statement without the field check: they still answer
        /// 400, and nothing is written.
        @Test func notJSONThroughThePrecheckedPatchIs400() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let term = try me.createTerm(set: set["id"] as! String)
            let path = "/v1/terms/\(term["id"] as! String)"
            for text in [
                #"{"definition": "x", "revision": 01}"#, #"{"definition": "x\u12"}"#,
                #"{"definition": "x\q"}"#, #"{"definition": "x\u0000"}"#,
            ] {
                let response = try me.call("PATCH", path, body: Array(text.utf8), headers: [("If-Match", "*")])
                #expect(response.status == 400, "\(text): \(response.text)")
                #expect(response.code == "invalid_json", "\(text)")
            }
            #expect(try me.call("GET", path).object["revision"] as? Int == 1)
        }

        @Test func deepNestingIsRefusedWithoutACrash() throws {
            let me = try ResourceFixture.user()
            let deep = String(repeating: "[", count: 2000) + String(repeating: "]", count: 2000)
            let response = try me.call("POST", "/v1/study_sets", body: Array(("{\"title\": \"t\", \"x\": " + deep + "}").utf8))
            #expect(response.status == 400)
            #expect(response.code == "invalid_json")
            let patch = try me.call("PATCH", "/v1/terms", body: Array(deep.utf8))
            #expect(patch.status == 400)
            #expect(try me.call("GET", "/v1/auth/me").status == 200, "the server still serves")
        }

        /// A string's bytes go to PostgreSQL through a Swift String, whose making replaces an
        /// ill-formed sequence with U+FFFD: without the scan's check the row kept text the
        /// client never sent, and answered 201.
        @Test func aStringThatIsNotUTF8Is400AndWritesNothing() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let prefix = Array(#"{"title": "u8"#.utf8), suffix = Array(#""}"#.utf8)
            for bad: [UInt8] in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]] {
                let body = prefix + bad + suffix
                for (method, path) in [("POST", "/v1/study_sets"), ("PATCH", "/v1/study_sets/\(set.id)")] {
                    let response = try me.call(method, path, body: body, headers: [("If-Match", "*")])
                    #expect(response.status == 400, "\(bad) \(method): \(response.text)")
                    #expect(response.code == "invalid_json" && response.text.contains("UTF-8"), "\(response.text)")
                }
            }
            let count = try me.server.ownerQuery("SELECT count(*) FROM app.study_sets WHERE creator_id = $1", [me.userID])
            #expect(count.rows.first?[0] == "1")
            // Every well-formed length still goes through, as sent.
            let title = "é € 😀"
            let created = try me.call("POST", "/v1/study_sets", body: Array(#"{"title": "\#(title)"}"#.utf8))
            #expect(created.status == 201, "\(created.text)")
            #expect(created.object["title"] as? String == title)
        }

        /// jsonb prints a number in full, and the refusal echoes the item's id: 1e400 came back
        /// as 401 digits that Foundation's parser refuses, and the answer was 500.
        @Test func aNumberNoDoubleHoldsIsRefusedAs422NotA500() throws {
            let me = try ResourceFixture.user()
            for text in [#"{"id": 1e400, "title": "x"}"#, #"[{"id": -1e400, "title": "x"}]"#, #"{"id": 1e309, "title": "x"}"#] {
                let response = try me.call("POST", "/v1/study_sets", body: Array(text.utf8))
                #expect(response.status == 422, "\(text): \(response.text)")
                let errors = response.object["errors"] as? [[String: Any]] ?? []
                #expect(errors.first?["field"] as? String == "id", "\(response.text)")
                #expect(errors.first?["reason"] as? String == "wrong_type", "\(response.text)")
                #expect(errors.first?["detail"] as? String == "id takes a string (a uuid): the value sent is another kind of JSON value")
            }
            // wrong_type's detail says what the column takes.
            let number = try me.call("POST", "/v1/study_sets", json: ["title": 5])
            let entry = (number.object["errors"] as? [[String: Any]])?.first
            #expect(
                entry?["reason"] as? String == "wrong_type" && (entry?["detail"] as? String ?? "").hasPrefix("title takes a string"), "\(number.text)"
            )
        }

        /// Past numeric's range the body's own jsonb cast fails, before any column: it was a
        /// 422 naming no field.
        @Test func aNumberPastNumericsRangeIs400() throws {
            let me = try ResourceFixture.user()
            for text in [#"{"title": 1e999999999}"#, #"[{"title": 1e999999999}]"#, #"{"title": "t", "description": -1e200000}"#] {
                let response = try me.call("POST", "/v1/study_sets", body: Array(text.utf8))
                #expect(response.status == 400, "\(text): \(response.text)")
                #expect(response.code == "invalid_json" && response.text.contains("number"), "\(text): \(response.text)")
            }
        }

        @Test func wrongContentTypeIs415() throws {
            let me = try ResourceFixture.user()
            let response = try me.call("POST", "/v1/study_sets", body: Array("{\"title\":\"t\"}".utf8), headers: [("Content-Type", "text/plain")])
            #expect(response.status == 415)
            #expect(response.code == "unsupported_media_type")
        }

        /// JSON is UTF-8: a body said to be in another charset is 415 naming it, before
        /// anything is written; UTF-8 under any of its spellings is taken.
        @Test func aCharsetOtherThanUTF8Is415() throws {
            let me = try ResourceFixture.user()
            let body = Array(#"{"title": "caf\#u{E9}"}"#.utf8)
            for charset in ["latin1", "\"ISO-8859-1\"", "utf-16"] {
                let response = try me.call("POST", "/v1/study_sets", body: body, headers: [("Content-Type", "application/json; charset=\(charset)")])
                #expect(response.status == 415 && response.code == "unsupported_media_type", "\(charset): \(response.text)")
                #expect(response.text.contains("charset=\(charset.replacingOccurrences(of: "\"", with: ""))"), "\(response.text)")
            }
            #expect((try me.call("GET", "/v1/study_sets").object["data"] as? [Any])?.count == 0, "nothing written")
            for charset in ["utf-8", "UTF-8", "\"utf8\""] {
                let response = try me.call("POST", "/v1/study_sets", body: body, headers: [("Content-Type", "application/json; charset=\(charset)")])
                #expect(response.status == 201, "\(charset): \(response.text)")
            }
        }

        @Test func tenMebibyteBodies() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            // Just under limits.max_body_bytes (10 MiB): 1,000 terms of 10,000 characters each.
            let text = String(repeating: "x", count: 10_000)
            let items = (0..<1000).map { ["set_id": set.id, "definition": text, "rank": "U\($0)V"] }
            let body = Array(try JSONSerialization.data(withJSONObject: items))
            #expect(body.count > 10_000_000 && body.count <= 10 * 1024 * 1024)
            me.client.timeout = 120
            let created = try me.call("POST", "/v1/terms", body: body)
            #expect(created.status == 201, "\(created.text.prefix(200))")
            #expect(created.array.count == 1000)
            // Above the limit: 413 as soon as the head announces it (the server
            // need not read the body, so only the head is sent here).
            let tooBig = try ResourceFixture.user()
            let head =
                "POST /v1/terms HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(tooBig.token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(10 * 1024 * 1024 + 1)\r\n\r\n"
            try tooBig.client.send(Array(head.utf8))
            let refused = try tooBig.client.readResponse()
            #expect(refused.status == 413)
            // A single value far over its column's CHECK is a clear 422, not a crash.
            let huge = try me.call("POST", "/v1/study_sets", json: ["title": "t", "description": String(repeating: "y", count: 9_000_000)])
            #expect(huge.status == 422)
            #expect(huge.errors.first?["field"] as? String == "description")
        }
    }
}
