import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

extension Todo {
    /// The OpenAPI document fits any schema: a row and a tombstone are told apart by
    /// `is_deleted` (false in a row, true in a tombstone), even for a table whose every
    /// column is a reference, whose tombstone carries every column a row has.
    @Suite struct TodoOpenAPITests {
        @Test func aTombstoneOfATableOfReferencesMatchesExactlyOneSchema() throws {
            let server = try TodoFixture.server()
            let directory = try Subprocess.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let document = directory.appendingPathComponent("openapi.json")
            try Data(try server.client().request("GET", "/openapi.json").body).write(to: document)
            // The Index item of list_members: oneOf [its row, Tombstone], checked by the
            // jsonschema package (openapi-spec-validator's own dependency). Imported with
            // __import__, so that ModuleEdgesTests does not take a Python import for Swift's.
            let script = """
                json, sys = __import__("json"), __import__("sys")
                Draft202012Validator = __import__("jsonschema").Draft202012Validator
                document = json.load(open(sys.argv[1]))
                item = document["components"]["schemas"]["list_members.index"]["properties"]["data"]["items"]
                def matches(instance):
                    return [Draft202012Validator(dict(branch, components=document["components"])).is_valid(instance)
                            for branch in item["oneOf"]]
                ids = {"id": "6f1c0f3e-0000-4000-8000-000000000001", "list_id": "6f1c0f3e-0000-4000-8000-000000000002",
                       "user_id": "6f1c0f3e-0000-4000-8000-000000000003", "revision": 2, "last_modified": 1700000000000}
                print(json.dumps({"row": matches(dict(ids, is_deleted=False)), "tombstone": matches(dict(ids, is_deleted=True))}))
                """
            let result = try Subprocess.run(["python3", "-c", script, document.path])
            try #require(result.status == 0, "\(result.output)")
            let verdict = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: [Bool]]
            #expect(verdict?["row"] == [true, false], "a live row is a row, not a tombstone: \(result.output)")
            #expect(verdict?["tombstone"] == [false, true], "a tombstone is a tombstone, not a row: \(result.output)")
        }
    }
}
