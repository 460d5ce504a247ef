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
        #expect(!result.output.contains("No module named"),
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
        operations.sort { ($0.1 == "/v1/auth/token" && $0.0 == "DELETE" ? 1 : 0, $0.1, $0.0) < ($1.1 == "/v1/auth/token" && $1.0 == "DELETE" ? 1 : 0, $1.1, $1.0) }
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
