import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The console's operator items of issue 48, over real sockets: disabling a
/// user (at once, on every instance, token caches included; reversibly),
/// revoking all of a user's tokens, finding users by any part of the name,
/// searching the audit log, and each token's last use.
@Suite struct ConsoleUserAdminTests {
    private func basic(_ name: String, _ password: String) -> [(String, String)] {
        [("Authorization", "Basic " + Data("\(name):\(password)".utf8).base64EncodedString())]
    }

    private func me(_ client: TestHTTPClient, _ token: String) throws -> Int {
        try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(token)")]).status
    }

    private func auditActions(_ fixture: ConsoleFixture, search: String) throws -> [(String, Int?)] {
        let entries = try fixture.console("GET", "/audit?search=\(search)").object["entries"] as? [[String: Any]] ?? []
        return entries.map { ($0["action"] as? String ?? "", $0["status"] as? Int) }
    }

    @Test func disablingAUserStopsTheirRequestsAtOnceOnEveryInstanceAndEnablingUndoesIt() throws {
        // Caches that would trust a checked token for ten minutes.
        let fixture = try ConsoleFixture { $0.auth.tokenCacheSeconds = 600 }
        defer { fixture.stop() }
        let other = try TestFerryInstance(database: fixture.server.database) { $0.auth.tokenCacheSeconds = 600 }
        defer { other.stop() }
        let jo = try fixture.server.user("jo", password: "jo-password")
        let finder = try fixture.server.user("finder")
        let here = fixture.server.client(), there = other.client()
        #expect(try me(here, jo.token) == 200)
        #expect(try me(there, jo.token) == 200)
        let disable = "/users/\(jo.id)/disable"

        // A viewer may not, and is audited; an admin must confirm.
        #expect(try fixture.console("POST", disable, token: fixture.viewer, json: ["confirm": true]).status == 403)
        #expect(try fixture.console("POST", disable, json: [String: Any]()).object["code"] as? String == "confirmation_required")
        #expect(try me(here, jo.token) == 200)

        let disabled = try fixture.console("POST", disable, json: ["confirm": true])
        #expect(disabled.status == 200, "\(disabled.text)")
        #expect(disabled.object["disabled"] as? Bool == true)
        #expect(disabled.object["revoked_tokens"] as? Int == 1)
        // At once on this instance, and on the other as soon as it hears of it (its cache would trust the token 600 s).
        #expect(try me(here, jo.token) == 401)
        let refused = try waitFor("the other instance to refuse the disabled user's token", within: 60) {
            let status = try me(there, jo.token)
            return status == 200 ? nil : status
        }
        #expect(refused == 401)
        // No new token: the right password says so; a wrong one says what it always does.
        let signIn = try here.request("POST", "/v1/auth/token", headers: basic("jo", "jo-password"))
        #expect(signIn.status == 403)
        #expect(signIn.object["code"] as? String == "forbidden")
        #expect(try here.request("POST", "/v1/auth/token", headers: basic("jo", "not-it")).status == 401)
        // Not findable: the same answer as a name nobody has.
        let lookup = try here.request("GET", "/v1/users/lookup?name=jo", headers: [("Authorization", "Bearer \(finder.token)")])
        let nobody = try here.request("GET", "/v1/users/lookup?name=nobody", headers: [("Authorization", "Bearer \(finder.token)")])
        #expect(lookup.status == 404 && lookup.body == nobody.body)
        // The console shows it.
        let page = try fixture.console("GET", "/users/\(jo.id)").object["user"] as? [String: Any] ?? [:]
        #expect(page["disabled"] as? Bool == true)
        #expect((page["disabled_at"] as? Int ?? 0) > 0)
        let listed = try fixture.console("GET", "/users?search=jo").object["users"] as? [[String: Any]] ?? []
        #expect(listed.first { $0["id"] as? String == jo.id }?["disabled"] as? Bool == true)

        // Reversible: enabled, the user signs in again and is found again.
        let enabled = try fixture.console("POST", "/users/\(jo.id)/enable", json: ["confirm": true])
        #expect(enabled.status == 200 && enabled.object["disabled"] as? Bool == false)
        let again = try here.request("POST", "/v1/auth/token", headers: basic("jo", "jo-password"))
        #expect(again.status == 201)
        #expect(try me(there, again.object["token"] as? String ?? "") == 200)
        let found = try here.request("GET", "/v1/users/lookup?name=jo", headers: [("Authorization", "Bearer \(finder.token)")])
        #expect(found.object["id"] as? String == jo.id)
        #expect(try fixture.console("GET", "/users/\(jo.id)").object["user"].flatMap { $0 as? [String: Any] }?["disabled"] as? Bool == false)

        // Every try audited, with what it came to.
        let actions = try auditActions(fixture, search: "able_user")
        #expect(actions.map(\.0) == ["enable_user", "disable_user", "disable_user"], "\(actions)")
        #expect(actions.map(\.1) == [200, 200, 403], "\(actions)")
        // No such user: 404, audited as such.
        let unknown = "00000000-0000-4000-8000-000000000000"
        #expect(try fixture.console("POST", "/users/\(unknown)/disable", json: ["confirm": true]).status == 404)
        #expect(try auditActions(fixture, search: unknown).first?.1 == 404)
    }

    @Test func aDisabledJWTUsersVerifiedTokenIsRefusedAtOnce() throws {
        let fixture = try JWTFixture()
        defer { fixture.stop() }
        let admin = try ConsoleFixture.operatorToken(fixture.server, name: "dana", role: "admin")
        func write(_ path: String) throws -> TestHTTPClient.Response {
            try fixture.server.client().request(
                "POST", "/console/api" + path, headers: [("Authorization", "Bearer \(admin)")], json: ["confirm": true])
        }
        let token = fixture.idp.token(subject: "sam", kid: "rsa-1")
        let first = try fixture.callSettled("GET", "/v1/auth/me", token: token)
        #expect(first.status == 200, "\(first.text)")
        let id = try #require(first.object["id"] as? String)
        // Verified and cached until it expires: no database check stands between it and its rows.
        #expect(try fixture.call("GET", "/v1/auth/me", token: token).status == 200)
        let disabled = try write("/users/\(id)/disable")
        #expect(disabled.status == 200 && disabled.object["revoked_tokens"] as? Int == 0, "\(disabled.text)")
        #expect(try fixture.call("GET", "/v1/auth/me", token: token).status == 401)
        #expect(try fixture.call("GET", "/v1/auth/me", token: fixture.idp.token(subject: "sam", kid: "rsa-1")).status == 401)
        #expect(try write("/users/\(id)/enable").status == 200)
        #expect(try fixture.call("GET", "/v1/auth/me", token: token).status == 200)
    }

    @Test func revokingAllOfAUsersTokensEndsEveryDeviceAtOnce() throws {
        let fixture = try ConsoleFixture { $0.auth.tokenCacheSeconds = 600 }
        defer { fixture.stop() }
        let kim = try fixture.server.user("kim", password: "kim-password")
        let lee = try fixture.server.user("lee")
        let client = fixture.server.client()
        let second = try #require(
            try client.request("POST", "/v1/auth/token", headers: basic("kim", "kim-password")).object["token"] as? String)
        for token in [kim.token, second, lee.token] { #expect(try me(client, token) == 200) }

        let path = "/users/\(kim.id)/tokens/revoke"
        #expect(try fixture.console("POST", path, token: fixture.viewer, json: ["confirm": true]).status == 403)
        let revoked = try fixture.console("POST", path, json: ["confirm": true])
        #expect(revoked.status == 200, "\(revoked.text)")
        #expect(revoked.object["revoked_tokens"] as? Int == 2)
        #expect(try me(client, kim.token) == 401)
        #expect(try me(client, second) == 401)
        #expect(try me(client, lee.token) == 200, "another user's token is untouched")
        // Not disabled: kim signs in again.
        #expect(try client.request("POST", "/v1/auth/token", headers: basic("kim", "kim-password")).status == 201)
        let tokens = try fixture.console("GET", "/users/\(kim.id)").object["tokens"] as? [[String: Any]] ?? []
        #expect(tokens.filter { $0["revoked"] as? Bool == true }.count == 2)
        #expect(try fixture.console("POST", "/users/00000000-0000-4000-8000-000000000000/tokens/revoke", json: ["confirm": true]).status == 404)
        let actions = try auditActions(fixture, search: "revoke_all_tokens")
        #expect(actions.map(\.1) == [404, 200, 403], "\(actions)")
    }

    @Test func operatorsFindUsersByAnyPartOfTheName() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let alice = try fixture.server.user("alice.smith")
        let malik = try fixture.server.user("Malice_99")
        _ = try fixture.server.user("bob")
        let found = try fixture.console("GET", "/users?search=ali").object["users"] as? [[String: Any]] ?? []
        #expect(found.compactMap { $0["id"] as? String } == [alice.id, malik.id], "names starting with it first: \(found)")
        // Case-insensitive, and LIKE's wildcards are plain characters.
        #expect((try fixture.console("GET", "/users?search=SMITH").object["users"] as? [[String: Any]])?.count == 1)
        #expect((try fixture.console("GET", "/users?search=%25").object["users"] as? [[String: Any]])?.isEmpty == true)
        #expect((try fixture.console("GET", "/users?search=_").object["users"] as? [[String: Any]])?.count == 1)
    }

    @Test func aTokensLastUseIsRecordedOffTheRequestPath() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let uma = try fixture.server.user("uma")
        func lastUsed() throws -> Int? {
            let tokens = try fixture.console("GET", "/users/\(uma.id)").object["tokens"] as? [[String: Any]] ?? []
            return tokens.first?["last_used_at"] as? Int
        }
        #expect(try lastUsed() == nil, "never used yet")
        let before = Int(Date().timeIntervalSince1970 * 1000) - 1_000
        #expect(try me(fixture.server.client(), uma.token) == 200)
        let seen = try waitFor("the token's use to be written", within: 60) { try lastUsed() }
        #expect(seen >= before)
        #expect(seen <= Int(Date().timeIntervalSince1970 * 1000) + 1_000)
    }

    @Test func theAuditLogIsSearchedAndPagedBack() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let user = try fixture.server.user("pat")
        _ = try fixture.console("GET", "/users?search=needle-one")
        _ = try fixture.console("GET", "/users/\(user.id)")
        _ = try fixture.console("GET", "/users?search=needle-two", token: fixture.viewer)
        let needles = try fixture.console("GET", "/audit?search=NEEDLE").object["entries"] as? [[String: Any]] ?? []
        #expect(needles.compactMap { ($0["target"] as? [String: Any])?["search"] as? String } == ["needle-two", "needle-one"])
        // By operator, by the user in the target.
        let byViewer = try fixture.console("GET", "/audit?search=vic").object["entries"] as? [[String: Any]] ?? []
        #expect(!byViewer.isEmpty && byViewer.allSatisfy { $0["operator"] as? String == "vic" })
        let byUser = try fixture.console("GET", "/audit?search=\(user.id)").object["entries"] as? [[String: Any]] ?? []
        #expect(byUser.map { $0["action"] as? String } == ["view_user"])
        // Paging back from an entry.
        let newest = try #require(needles.first?["id"] as? Int)
        let older = try fixture.console("GET", "/audit?search=needle&before=\(newest)").object["entries"] as? [[String: Any]] ?? []
        #expect(older.compactMap { ($0["target"] as? [String: Any])?["search"] as? String } == ["needle-one"])
        for bad in ["before=0", "before=x", "nope=1"] {
            let response = try fixture.console("GET", "/audit?\(bad)")
            #expect(response.status == 400, "\(bad)")
            #expect(response.object["code"] as? String == "invalid_query")
        }
    }
}
