@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// docs/SIGN-IN.md as written: its provider configuration (with the test
/// provider's JWKS URL for Keycloak's) and its claim policy's SQL, applied
/// and used over HTTP with tokens from the test provider.
@Suite struct JWTGuideTests {
    /// The fenced blocks of `language` in the guide.
    static func blocks(_ language: String) throws -> [String] {
        let text = try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/SIGN-IN.md"), encoding: .utf8)
        var blocks: [String] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```\(language)" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else if current != nil {
                current!.append(String(line))
            }
        }
        return blocks
    }

    @Test func theGuidesProviderAndClaimPolicyWorkAsWritten() throws {
        let configuration = try #require(try Self.blocks("json").first { $0.contains("jwt_providers") })
        let sql = try #require(try Self.blocks("sql").first)
        // The guide's issuer, served by the test provider; only the JWKS URL is the test's own.
        let idp = try TestIdentityProvider(issuer: "https://keycloak.example.com/realms/app", audience: "ferry")
        defer { idp.stop() }
        let keycloak = "https://keycloak.example.com/realms/app/protocol/openid-connect/certs"
        #expect(configuration.contains(keycloak))
        var loaded = FerryConfiguration()
        try ConfigurationLoader.apply(
            json: Data(configuration.replacingOccurrences(of: keycloak, with: idp.jwksURL).utf8),
            source: "docs/SIGN-IN.md", to: &loaded)
        // A second provider whose users also say org_id "acme" (issue 51): the guide's policy keeps them apart.
        let rival = try TestIdentityProvider(issuer: "https://rival.example.com", audience: "ferry")
        defer { rival.stop() }
        let server = try TestServer { $0.auth.jwtProviders = loaded.auth.jwtProviders + [JWTFixture.provider(rival)] }
        defer { server.stop() }
        let owner = try PostgresConnection(url: server.database.ownerURL)
        defer { owner.close() }
        try owner.execute(sql)
        server.app.reloadSchema()

        func call(_ method: String, _ path: String, _ token: String, json: Any? = nil) throws -> TestHTTPClient.Response {
            try server.client().request(method, path, headers: [("Authorization", "Bearer \(token)")], json: json)
        }
        let alice = idp.token(subject: "alice", extra: [("org_id", "acme")])
        let bob = idp.token(subject: "bob", extra: [("org_id", "acme")])
        let eve = idp.token(subject: "eve", extra: [("org_id", "globex")])
        let nobody = idp.token(subject: "nobody")
        let rivalAcme = rival.token(subject: "alice", extra: [("org_id", "acme")])
        let note = try call("POST", "/v1/org_notes", alice, json: ["body": "quarterly plan"])
        #expect(note.status == 201, "\(note.text)")
        #expect(note.object["org_id"] as? String == "acme", "the column takes the token's claim")
        let id = try #require(note.object["id"] as? String)
        #expect(try call("GET", "/v1/org_notes/\(id)", bob).status == 200, "a member of the same organisation reads it")
        #expect(try call("PATCH", "/v1/org_notes/\(id)", bob, json: ["body": "edited", "revision": 1]).status == 200)
        for outsider in [eve, nobody, rivalAcme] {
            #expect(try call("GET", "/v1/org_notes/\(id)", outsider).status == 404)
            #expect((try call("GET", "/v1/org_notes", outsider).object["data"] as? [Any])?.isEmpty == true)
            #expect(try call("PATCH", "/v1/org_notes/\(id)", outsider, json: ["body": "x", "revision": 2]).status == 404)
        }
        // The body cannot choose the organisation: org_id and org_iss are not in the INSERT grant.
        let forged = try call("POST", "/v1/org_notes", eve, json: ["body": "x", "org_id": "acme"])
        #expect(forged.status == 422, "\(forged.text)")
        let forgedIssuer = try call("POST", "/v1/org_notes", rivalAcme, json: ["body": "x", "org_iss": idp.issuer])
        #expect(forgedIssuer.status == 422, "\(forgedIssuer.text)")
        // The rival's acme writes its own note, which the first provider's acme never sees.
        let rivalNote = try call("POST", "/v1/org_notes", rivalAcme, json: ["body": "theirs"])
        #expect(rivalNote.status == 201 && rivalNote.object["org_iss"] as? String == rival.issuer, "\(rivalNote.text)")
        #expect(try call("GET", "/v1/org_notes/\(rivalNote.object["id"] as? String ?? "")", alice).status == 404)
        // The feed serves the note once every older transaction of the cluster has ended
        // (other suites hold some open): wait for it rather than read once.
        var changes: [Any]?
        let served = eventually(within: 180, every: 0.05) {
            changes = (try? call("GET", "/v1/changes?resources=org_notes", bob).object["changes"]) as? [Any]
            return changes?.isEmpty == false
        }
        #expect(served && changes?.count == 1, "\(changes ?? [])")
    }
}
