import Foundation
import FerryTestSupport
import Testing

/// `GET /openapi.json`, checked by the real `openapi-spec-validator` (PyPI),
/// which `deploy/local.sh install` installs for CI.
@Suite struct OpenAPITests {
    private func validate(_ body: [UInt8]) throws {
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("openapi.json")
        try Data(body).write(to: file)
        let result = try Subprocess.run(["python3", "-m", "openapi_spec_validator", "--schema", "3.1", file.path])
        #expect(
            !result.output.contains("No module named"),
            "openapi-spec-validator is not installed: run `deploy/local.sh install` (pip install openapi-spec-validator)")
        #expect(result.status == 0, "openapi-spec-validator rejected the document:\n\(result.output)")
        #expect(result.output.contains("OK"), "unexpected validator output:\n\(result.output)")
    }

    @Test func documentIsValidOpenAPI31AndDescribesEveryResource() throws {
        let server = try TestServer()
        defer { server.stop() }
        let response = try server.client().request("GET", "/openapi.json")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        try validate(response.body)

        let document = response.object
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: Any])
        let names = server.app.schema.catalog.names
        #expect(names.contains("terms"))
        for name in names {
            let collection = try #require(paths["/v1/\(name)"] as? [String: Any], "missing /v1/\(name)")
            #expect(Set(collection.keys).isSuperset(of: ["get", "post", "patch", "delete"]))
            let member = try #require(paths["/v1/\(name)/{id}"] as? [String: Any], "missing /v1/\(name)/{id}")
            #expect(Set(member.keys).isSuperset(of: ["get", "put", "patch", "delete"]))
        }
        for path in ["/v1", "/v1/auth/token", "/v1/auth/me", "/healthz", "/readyz", "/metrics", "/openapi.json"] {
            #expect(paths[path] != nil, "missing \(path)")
        }
        #expect(paths["/v1/users"] == nil, "sign-up is off by default")

        let components = try #require(document["components"] as? [String: Any])
        let schemes = try #require(components["securitySchemes"] as? [String: Any])
        let bearer = try #require(schemes["bearerAuth"] as? [String: Any])
        #expect(bearer["scheme"] as? String == "bearer")
        let schemas = try #require(components["schemas"] as? [String: Any])
        let terms = try #require(schemas["terms"] as? [String: Any])
        let properties = try #require(terms["properties"] as? [String: Any])
        let setID = try #require(properties["set_id"] as? [String: Any])
        #expect(setID["format"] as? String == "uuid")
        let revision = try #require(properties["revision"] as? [String: Any])
        #expect(revision["type"] as? String == "integer")
        #expect(revision["readOnly"] as? Bool == true)
        let problem = try #require(schemas["Problem"] as? [String: Any])
        let code = try #require((problem["properties"] as? [String: Any])?["code"] as? [String: Any])
        let codes = try #require(code["enum"] as? [String])
        for expected in ["revision_conflict", "paging_token_expired", "cursor_expired", "idempotency_key_reused", "rate_limited"] {
            #expect(codes.contains(expected))
        }
    }

    @Test func everyDescribedOperationIsServed() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let paths = try #require(client.request("GET", "/openapi.json").object["paths"] as? [String: [String: Any]])
        var operations: [(String, String)] = []
        for (path, item) in paths {
            for method in ["get", "put", "post", "delete", "patch"] where item[method] != nil {
                operations.append((method.uppercased(), path.replacingOccurrences(of: "{id}", with: "x")))
            }
        }
        // Revoking the token last, so the other calls still carry a valid one.
        operations.sort {
            ($0.1 == "/v1/auth/token" && $0.0 == "DELETE" ? 1 : 0, $0.1, $0.0) < ($1.1 == "/v1/auth/token" && $1.0 == "DELETE" ? 1 : 0, $1.1, $1.0)
        }
        #expect(operations.count >= 30)
        for (method, path) in operations {
            let body: Any? = ["POST", "PUT", "PATCH", "DELETE"].contains(method) ? [String: Any]() : nil
            let response = try client.request(method, path, headers: [("Authorization", "Bearer \(alice.token)")], json: body)
            #expect(response.status != 405, "\(method) \(path) is described but not allowed")
            let routeMissing = response.status == 404 && (response.object["detail"] as? String ?? "").lowercased().hasPrefix("no route")
            #expect(!routeMissing, "\(method) \(path) is described but not routed")
        }
    }

    @Test func signUpAppearsWhenEnabledAndStillValidates() throws {
        let server = try TestServer { $0.auth.allowSignup = true }
        defer { server.stop() }
        let response = try server.client().request("GET", "/openapi.json")
        try validate(response.body)
        let paths = response.object["paths"] as? [String: Any] ?? [:]
        #expect(paths["/v1/users"] != nil)
    }

    // Issue 21, item 10: the description is as tight as the server. Each test
    // below sends values on both sides of a limit and expects the document's
    // schema and the server to give the same verdict on each.

    @Test func idempotencyKeyIsOneTo255VisibleASCIICharacters() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let document = try DescribedSchemas(server.client())
        let schema = try document.parameter("IdempotencyKey")
        let samples = ["k", String(repeating: "~", count: 255), String(repeating: "~", count: 256), "a b", "caf\u{E9}", "!\"#$%&'()*"]
        for (index, key) in samples.enumerated() {
            let response = try server.client().request(
                "POST", "/v1/study_sets",
                headers: [
                    ("Authorization", "Bearer \(alice.token)"), ("Idempotency-Key", key),
                ], json: ["title": "set \(index)"])
            #expect(
                Schema.accepts(schema, key) == (response.status == 201), "key \(key.prefix(20)) (\(key.count)): \(response.status) \(response.text)")
            if response.status != 201 { #expect(response.status == 400 && response.object["code"] as? String == "bad_request") }
        }
    }

    @Test func modifiedSinceIsANonNegativeInt64() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let schema = try DescribedSchemas(server.client()).parameter("modified_since")
        for value in ["0", "-1", "1795648606984", "9223372036854775807", "9223372036854775808"] {
            let response = try server.client().request(
                "GET", "/v1/terms?modified_since=\(value)", headers: [("Authorization", "Bearer \(alice.token)")])
            #expect(Schema.accepts(schema, value) == (response.status == 200), "modified_since=\(value): \(response.status)")
        }
    }

    @Test func bulkDeleteItemsTypeTheirIDAsTheResourceDoes() throws {
        let server = try TestServer()
        defer { server.stop() }
        let document = try DescribedSchemas(server.client())
        let body = try document.requestBody("/v1/terms", "delete")
        let items = try document.resolve(body["items"])
        let id = try #require((items["properties"] as? [String: Any])?["id"] as? [String: Any])
        #expect(id["type"] as? String == "string" && id["format"] as? String == "uuid", "IdRevision.id: \(id)")
        #expect(Set(items["required"] as? [String] ?? []) == ["id", "revision"])
        let revision = try #require((items["properties"] as? [String: Any])?["revision"] as? [String: Any])
        #expect(revision["minimum"] as? Int == 0)
    }

    @Test func changesResourcesIsAListOfServedNames() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let schema = try DescribedSchemas(server.client()).parameter("resources", path: "/v1/changes", method: "get")
        for value in ["", ",", "terms", "terms,", "terms,study_sets", "nope", "terms,,folders", "terms.study_sets"] {
            let query = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
            let response = try server.client().request("GET", "/v1/changes?resources=\(query)", headers: [("Authorization", "Bearer \(alice.token)")])
            #expect(Schema.accepts(schema, value) == (response.status == 200), "resources=\(value): \(response.status) \(response.text)")
        }
    }

    @Test func batchOperationsHaveOnlyTheirFourMembersAndFiveMethods() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let document = try DescribedSchemas(server.client())
        let body = try document.requestBody("/v1/batch", "post")
        let request = try document.resolve(body)
        let operations = try #require((request["properties"] as? [String: Any])?["operations"] as? [String: Any])
        let operation = try #require(operations["items"] as? [String: Any])
        #expect(operation["additionalProperties"] as? Bool == false)
        let methods = try #require((operation["properties"] as? [String: Any])?["method"] as? [String: Any])
        let samples: [[String: Any]] = [
            ["method": "GET", "path": "/v1/terms"],
            ["method": "GET", "path": "/v1/terms", "extra": 1],
            ["method": "GET", "path": "/v1/terms", "Headers": [String: String]()],
            ["method": "HEAD", "path": "/v1/terms"],
            ["method": "OPTIONS", "path": "/v1/terms"],
        ]
        for sample in samples {
            let response = try server.client().request(
                "POST", "/v1/batch", headers: [("Authorization", "Bearer \(alice.token)")],
                json: ["operations": [sample]])
            let described =
                Set(sample.keys).isSubset(of: Set((operation["properties"] as? [String: Any] ?? [:]).keys))
                && Schema.accepts(methods, sample["method"] as? String ?? "")
            #expect(described == (response.status == 200), "\(sample): \(response.status) \(response.text)")
        }
    }

    @Test func aRankKeyIsWhatFerryRankAccepts() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let auth = [("Authorization", "Bearer \(alice.token)")]
        let set = try client.request("POST", "/v1/study_sets", headers: auth, json: ["title": "ranked"]).object["id"] as? String ?? ""
        let document = try DescribedSchemas(client)
        let write = try document.schema("terms.create")
        let rank = try #require((write["properties"] as? [String: Any])?["rank"] as? [String: Any])
        let forms = try #require(rank["anyOf"] as? [[String: Any]])
        let key = forms[0]
        for value in ["", "V", "a0", "0", "first", String(repeating: "z", count: 128), String(repeating: "z", count: 129), "a-b"] {
            let response = try client.request("POST", "/v1/terms", headers: auth, json: ["set_id": set, "rank": value])
            let described = Schema.accepts(key, value) || value == "first"
            #expect(described == (response.status == 201), "rank \(value.prefix(12)) (\(value.count)): \(response.status) \(response.text)")
            if response.status == 422 {
                let reason = (response.object["errors"] as? [[String: Any]])?.first?["reason"] as? String
                #expect(reason == "invalid_value", "a malformed rank's reason is a stable code: \(response.text)")
            }
        }
    }

    @Test func aControlCharacterInAPathIDIsTheDescribed400() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let document = try DescribedSchemas(server.client())
        let id = try document.parameter("id", path: "/v1/terms/{id}")
        #expect(!Schema.accepts(id, "a\u{1}b") && Schema.accepts(id, "a b"))
        for method in ["get", "put", "patch", "delete"] {
            let operation = try document.operation("/v1/terms/{id}", method)
            let responses = try #require(operation["responses"] as? [String: Any])
            #expect(responses["400"] != nil, "\(method) /v1/terms/{id} does not describe its 400")
        }
        let response = try server.client().request("GET", "/v1/terms/a%01b", headers: [("Authorization", "Bearer \(alice.token)")])
        #expect(response.status == 400 && response.object["code"] as? String == "bad_request", "\(response.status) \(response.text)")
        #expect(response.header("Content-Type") == "application/problem+json")
    }

    @Test func indexQueryParametersAreDescribedAsTheServerReadsThem() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let document = try DescribedSchemas(server.client())
        let get = { (query: String) in
            try server.client().request("GET", "/v1/terms?\(query)", headers: [("Authorization", "Bearer \(alice.token)")]).status
        }
        let isDeleted = try document.parameter("is_deleted", path: "/v1/terms", method: "get")
        for value in ["true", "false", "0", "yes", "true,false", ""] {
            #expect(Schema.accepts(isDeleted, value) == (try get("is_deleted=\(value)") == 200), "is_deleted=\(value)")
        }
        let setID = try document.parameter("set_id", path: "/v1/terms", method: "get")
        let uuid = "0e2a2cba-c8af-4c2d-aa6d-ae3f1e281d81"
        for value in [uuid, uuid.replacingOccurrences(of: "-", with: ""), "{\(uuid)}", "\(uuid),\(uuid)", "", "0e2a2cba-c8af4c2d-aa6d-ae3f1e281d81"] {
            let query = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
            #expect(Schema.accepts(setID, value) == (try get("set_id=\(query)") == 200), "set_id=\(value)")
        }
        let revision = try document.parameter("revision", path: "/v1/terms", method: "get")
        for value in ["1", "-1", "+1", "1.0", "123456789012345678"] {
            let query = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
            #expect(Schema.accepts(revision, value) == (try get("revision=\(query)") == 200), "revision=\(value)")
        }
        let order = try document.parameter("order", path: "/v1/terms", method: "get")
        for value in ["rank", "rank.desc,id", "", "rank,", "nope", "rank.up"] {
            #expect(Schema.accepts(order, value) == (try get("order=\(value)") == 200), "order=\(value)")
        }
        // page only with a paging_token: one exploded object whose schema says so.
        let paging = try document.parameter("paging", path: "/v1/terms", method: "get")
        let dependent = try #require(paging["dependentRequired"] as? [String: [String]])
        #expect(dependent["page"] == ["paging_token"])
        #expect(try get("page=1") == 400)
    }

    @Test func aCreatedRowLinksToItsReadUpdateAndDelete() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.client()
        let document = try DescribedSchemas(client)
        let paths = document.document["paths"] as? [String: [String: Any]] ?? [:]
        let operationIDs = Set(paths.values.flatMap { $0.values.compactMap { ($0 as? [String: Any])?["operationId"] as? String } })
        let created = try #require(document.operation("/v1/study_sets", "post")["responses"] as? [String: Any])
        let links = try #require((created["201"] as? [String: Any])?["links"] as? [String: [String: Any]])
        #expect(Set(links.keys) == ["read", "update", "replace", "delete"])
        for (name, link) in links {
            #expect(operationIDs.contains(link["operationId"] as? String ?? ""), "link \(name) names no operation: \(link)")
        }
        // Followed by hand: the expressions pick what the next request needs.
        let auth = ("Authorization", "Bearer \(alice.token)")
        let row = try client.request("POST", "/v1/study_sets", headers: [auth], json: ["title": "linked"])
        let id = try #require(row.object["id"] as? String)
        let etag = try #require(row.header("ETag"))
        #expect(try client.request("PATCH", "/v1/study_sets/\(id)", headers: [auth, ("If-Match", etag)], json: ["title": "t"]).status == 200)
        #expect(try client.request("DELETE", "/v1/study_sets/\(id)?revision=2", headers: [auth]).status == 200)
    }

    @Test func validatorRejectsABrokenDocument() throws {
        // The check above is only worth something if the validator can fail.
        let broken = Array(#"{"openapi":"3.1.0","info":{"title":"x"},"paths":{"/a":{"get":{"responses":{"200":{}}}}}}"#.utf8)
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("broken.json")
        try Data(broken).write(to: file)
        let result = try Subprocess.run(["python3", "-m", "openapi_spec_validator", "--schema", "3.1", file.path])
        #expect(result.status != 0, "the validator accepted a document without info.version:\n\(result.output)")
    }
}
