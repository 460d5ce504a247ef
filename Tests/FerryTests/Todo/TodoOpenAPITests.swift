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

        /// A client picks its rows' ids (an app working offline must): GET /v1 calls
        /// `id` writable, never updatable, and the OpenAPI document does not call it
        /// read-only (issue 48: both said a client may not send it).
        @Test func clientsMaySendIDs() throws {
            let server = try TodoFixture.server()
            let alice = try TodoFixture.user("alice")
            let resources = try alice.call("GET", "/v1").object["resources"] as? [[String: Any]] ?? []
            #expect(resources.count == 4)
            for resource in resources {
                let columns = resource["columns"] as? [[String: Any]] ?? []
                let id = try #require(columns.first { $0["name"] as? String == "id" })
                #expect(id["writable"] as? Bool == true && id["updatable"] as? Bool == false, "\(resource["name"] ?? ""): \(id)")
                let revision = try #require(columns.first { $0["name"] as? String == "revision" })
                #expect(revision["writable"] as? Bool == false)
            }
            let document = try server.client().request("GET", "/openapi.json").object
            let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]
            let lists = (schemas["lists"] as? [String: Any])?["properties"] as? [String: Any] ?? [:]
            let id = try #require(lists["id"] as? [String: Any])
            #expect(id["readOnly"] == nil, "\(id)")
            #expect((lists["revision"] as? [String: Any])?["readOnly"] as? Bool == true)
        }
    }
}
