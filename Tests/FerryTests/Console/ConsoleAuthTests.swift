import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Who may open the console: operators with a console token, never an app
/// user's token; viewers read, admins also write, after confirming; every
/// action is in the audit log with who did it.
@Suite struct ConsoleAuthTests {
    @Test func anOperatorSignsInWithAPasswordAndOutAgain() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let client = fixture.server.client()
        let basic = { (name: String, password: String) in "Basic " + Data("\(name):\(password)".utf8).base64EncodedString() }
        let signedIn = try client.request("POST", "/console/api/session", headers: [("Authorization", basic("dana", "dana-password"))])
        #expect(signedIn.status == 201)
        let token = try #require(signedIn.object["token"] as? String)
        #expect(token.hasPrefix("op_"))
        #expect((signedIn.object["operator"] as? [String: Any])?["role"] as? String == "admin")
        #expect(try fixture.console("GET", "/session", token: token).object["operator"] != nil)

        // A wrong password and an unknown name get the same 401.
        let wrong = try client.request("POST", "/console/api/session", headers: [("Authorization", basic("dana", "nope-nope"))])
        let unknown = try client.request("POST", "/console/api/session", headers: [("Authorization", basic("nobody", "nope-nope"))])
        #expect(wrong.status == 401 && unknown.status == 401)
        #expect(wrong.text == unknown.text)
        // An app user's name and password open nothing here.
        _ = try fixture.server.user("ivy", password: "ivy-password")
        #expect(try client.request("POST", "/console/api/session", headers: [("Authorization", basic("ivy", "ivy-password"))]).status == 401)

        #expect(try fixture.console("DELETE", "/session", token: token).status == 204)
        #expect(try fixture.console("GET", "/session", token: token).status == 401)
    }

    /// Every console operation the OpenAPI document lists answers 401 to an
    /// app user's token (and to none), whatever its method and body.
    @Test func anAppUsersTokenGets401OnEveryConsoleRoute() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        let tokenID = try #require(
            (try fixture.console("GET", "/users/\(story.friend.id)").object["tokens"] as? [[String: Any]])?
                .first?["id"] as? String)
        let document = try fixture.server.client().request("GET", "/openapi.json").object
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var operations: [(String, String)] = []
        for (path, item) in paths where path.hasPrefix("/console/") {
            for method in ["get", "post", "delete"] where item[method] != nil {
                let concrete = path.replacingOccurrences(of: "{user}", with: story.friend.id)
                    .replacingOccurrences(of: "{id}", with: story.set).replacingOccurrences(of: "{token}", with: tokenID)
                operations.append((method.uppercased(), concrete))
            }
        }
        #expect(operations.count >= 20)
        for (method, path) in operations {
            let body: Any? = method == "POST" ? ["confirm": true] : nil
            for headers in [[("Authorization", "Bearer \(story.friend.token)")], [("Authorization", "Bearer \(story.owner.token)")], []] {
                let response = try fixture.server.client().request(method, path, headers: headers, json: body)
                #expect(response.status == 401, "\(method) \(path) with \(headers.isEmpty ? "no token" : "a user's token"): \(response.status)")
                #expect(response.object["code"] as? String == "unauthorized")
            }
        }
        // Nothing was changed or read on the way: the token still works, nothing was audited.
        #expect(try fixture.app("GET", "/v1/auth/me", token: story.friend.token).status == 200)
        let audit = try fixture.console("GET", "/audit").object["entries"] as? [[String: Any]] ?? []
        #expect(audit.allSatisfy { $0["operator"] as? String == "dana" })
    }

    /// A console token is no user's: it opens no /v1 route.
    @Test func aConsoleTokenOpensNoAppRoute() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        for path in ["/v1", "/v1/auth/me", "/v1/changes", "/v1/terms", "/v1/study_sets"] {
            #expect(try fixture.app("GET", path, token: fixture.admin).status == 401, "\(path)")
        }
        #expect(try fixture.app("POST", "/v1/study_sets", token: fixture.admin, json: ["title": "x"]).status == 401)
    }

    @Test func writesNeedAnAdminAndAConfirmation() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let user = try fixture.server.user("jo")
        let tokenID = try #require(
            (try fixture.console("GET", "/users/\(user.id)").object["tokens"] as? [[String: Any]])?
                .first?["id"] as? String)
        let revoke = "/users/\(user.id)/tokens/\(tokenID)/revoke"
        // A viewer reads, and is refused writes even with a confirmation.
        #expect(try fixture.console("GET", "/resources", token: fixture.viewer).status == 200)
        #expect(try fixture.console("POST", "/purge", token: fixture.viewer, json: ["confirm": true]).status == 403)
        #expect(try fixture.console("POST", revoke, token: fixture.viewer, json: ["confirm": true]).object["code"] as? String == "forbidden")
        // An admin must confirm.
        for body: Any in [[String: Any](), ["confirm": false], ["confirm": 1]] {
            let response = try fixture.console("POST", revoke, json: body)
            #expect([400, 422].contains(response.status), "\(body): \(response.status)")
        }
        #expect(try fixture.console("POST", revoke, json: [String: Any]()).object["code"] as? String == "confirmation_required")
        #expect(try fixture.app("GET", "/v1/auth/me", token: user.token).status == 200)
        // Confirmed: the token is refused at once.
        let revoked = try fixture.console("POST", revoke, json: ["confirm": true])
        #expect(revoked.status == 200)
        #expect(try fixture.app("GET", "/v1/auth/me", token: user.token).status == 401)
        #expect(try fixture.console("POST", revoke, json: ["confirm": true]).status == 404)
        let tokens = try fixture.console("GET", "/users/\(user.id)").object["tokens"] as? [[String: Any]] ?? []
        #expect(tokens.first?["revoked"] as? Bool == true)
        // The viewer's two refused writes are in the audit log, with what they tried and their 403 (issue 48).
        let entries = try fixture.console("GET", "/audit").object["entries"] as? [[String: Any]] ?? []
        let refused = entries.filter { $0["operator"] as? String == "vic" && $0["status"] as? Int == 403 }
        #expect(Set(refused.compactMap { $0["action"] as? String }) == ["purge", "revoke_token"], "\(entries)")
        let target = refused.first { $0["action"] as? String == "revoke_token" }?["target"] as? [String: Any]
        #expect(target?["user_id"] as? String == user.id && target?["token_id"] as? String == tokenID)
    }

    @Test func everyActionIsAuditedWithWhoDidIt() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let story = try fixture.revokedCollaborator()
        _ = try fixture.console("GET", "/users/\(story.friend.id)/changes?since=\(story.cursor)", token: fixture.viewer)
        _ = try fixture.console("GET", "/resources/terms/rows?set_id=\(story.set)", token: fixture.viewer)
        _ = try fixture.console("GET", "/resources/study_sets/rows/\(story.set)")
        let purged = try fixture.console("POST", "/purge", json: ["confirm": true, "retention_days": 30])
        #expect(purged.status == 200)
        let entries = try fixture.console("GET", "/audit").object["entries"] as? [[String: Any]] ?? []
        let seen = entries.map { "\($0["operator"] as? String ?? "") \($0["action"] as? String ?? "")" }
        for expected in ["vic view_user_changes", "vic browse_rows", "dana view_row", "dana purge", "dana purge_done"] {
            #expect(seen.contains(expected), "\(expected) in \(seen)")
        }
        let changes = try #require(entries.first { $0["action"] as? String == "view_user_changes" })
        #expect((changes["target"] as? [String: Any])?["user_id"] as? String == story.friend.id)
        #expect((changes["request_id"] as? String)?.isEmpty == false)
    }
}
