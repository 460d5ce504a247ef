import Foundation
import Testing
import FerryTestSupport

/// Authentication over real sockets against a real PostgreSQL.
@Suite struct AuthTests {
    private func basic(_ name: String, _ password: String) -> (String, String) {
        ("Authorization", "Basic " + Data("\(name):\(password)".utf8).base64EncodedString())
    }

    @Test func goodCredentialsGetATokenThatWorks() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.user("alice", password: "alice-password")
        let client = server.client()
        let signIn = try client.request("POST", "/v1/auth/token", headers: [basic("alice", "alice-password")])
        #expect(signIn.status == 201)
        let token = try #require(signIn.object["token"] as? String)
        #expect(token.count >= 43)
        #expect(signIn.object["user_id"] as? String == alice.id)
        #expect((signIn.object["expires_at"] as? Int ?? 0) > Int(Date().timeIntervalSince1970 * 1000))
        let me = try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(token)")])
        #expect(me.status == 200)
        #expect(me.object["name"] as? String == "alice")
        #expect(me.object["id"] as? String == alice.id)
    }

    @Test func wrongPasswordAndUnknownUserLookTheSame() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.user("bob", password: "bob-password")
        let client = server.client()
        let wrong = try client.request("POST", "/v1/auth/token", headers: [basic("bob", "not-it")])
        let unknown = try client.request("POST", "/v1/auth/token", headers: [basic("nobody", "not-it")])
        #expect(wrong.status == 401)
        #expect(unknown.status == 401)
        #expect(wrong.body == unknown.body)
        #expect(wrong.header("WWW-Authenticate") == unknown.header("WWW-Authenticate"))
        let none = try client.request("POST", "/v1/auth/token")
        #expect(none.status == 401)
    }

    /// U+0000 in a name or password is no credential PostgreSQL could compare: refused as
    /// 400 naming it, before the database is asked (it answered 500, which clients retry).
    @Test func aNULInBasicCredentialsIs400NamingIt() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.user("carol", password: "carol-password")
        let client = server.client()
        for path in ["/v1/auth/token", "/console/api/session"] {
            for (name, password) in [("car\u{0}ol", "carol-password"), ("carol", "carol\u{0}-password")] {
                let response = try client.request("POST", path, headers: [basic(name, password)])
                #expect(response.status == 400, "\(path): \(response.text)")
                #expect(response.problemCode == "bad_request")
                #expect((response.object["detail"] as? String)?.contains("U+0000") == true)
            }
        }
        #expect(try client.request("POST", "/v1/auth/token", headers: [basic("carol", "carol-password")]).status == 201)
    }

    @Test func everyV1RouteNeedsAToken() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = server.client()
        for (method, path) in [("GET", "/v1"), ("GET", "/v1/auth/me"), ("DELETE", "/v1/auth/token")] {
            for header in [
                [], [("Authorization", "Bearer " + String(repeating: "A", count: 43))],
                [("Authorization", "Bearer short")], [("Authorization", "Basic Zm9vOmJhcg==")],
            ] {
                let response = try client.request(method, path, headers: header)
                #expect(response.status == 401, "\(method) \(path) \(header)")
                #expect(response.header("WWW-Authenticate") == "Bearer")
                #expect(response.header("Content-Type") == "application/problem+json")
                #expect(response.object["code"] as? String == "unauthorized")
            }
        }
    }

    @Test func revokedTokenStopsWorking() throws {
        let server = try TestServer()
        defer { server.stop() }
        let carol = try server.user("carol")
        let client = server.client()
        let auth = ("Authorization", "Bearer \(carol.token)")
        #expect(try client.request("GET", "/v1/auth/me", headers: [auth]).status == 200)
        #expect(try client.request("DELETE", "/v1/auth/token", headers: [auth]).status == 204)
        #expect(try client.request("GET", "/v1/auth/me", headers: [auth]).status == 401)
    }

    @Test func expiredTokenIsRefused() throws {
        let server = try TestServer()
        defer { server.stop() }
        let dave = try server.user("dave")
        _ = try server.ownerQuery("UPDATE ferry.tokens SET expires_at = now() - interval '1 second'")
        let response = try server.client().request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(dave.token)")])
        #expect(response.status == 401)
    }

    @Test func repeatedFailuresAreThrottled() throws {
        let server = try TestServer()
        defer { server.stop() }
        _ = try server.user("erin", password: "erin-password")
        let client = server.client()
        var statuses: [Int] = []
        for _ in 0..<6 {
            statuses.append(try client.request("POST", "/v1/auth/token", headers: [basic("erin", "nope")]).status)
        }
        #expect(statuses.prefix(4).allSatisfy { $0 == 401 })
        #expect(statuses.last == 429)
        // While locked, even the right password is refused, with a Retry-After.
        let locked = try client.request("POST", "/v1/auth/token", headers: [basic("erin", "erin-password")])
        #expect(locked.status == 429)
        #expect(Int(locked.header("Retry-After") ?? "") ?? 0 >= 1)
        #expect(locked.object["code"] as? String == "rate_limited")
    }

    @Test func signUpOnlyWhenAllowed() throws {
        let closed = try TestServer()
        defer { closed.stop() }
        let refused = try closed.client().request("POST", "/v1/users", json: ["name": "frank", "password": "frank-password"])
        #expect(refused.status == 404)

        let open = try TestServer { $0.auth.allowSignup = true }
        defer { open.stop() }
        let client = open.client()
        let created = try client.request("POST", "/v1/users", json: ["name": "frank", "password": "frank-password"])
        #expect(created.status == 201)
        #expect(try client.request("POST", "/v1/users", json: ["name": "frank", "password": "frank-password"]).status == 409)
        #expect(try client.request("POST", "/v1/users", json: ["name": "bad name!", "password": "frank-password"]).status == 422)
        #expect(try client.request("POST", "/v1/users", json: ["name": "gina", "password": "short"]).status == 422)
        #expect(try client.request("POST", "/v1/users", headers: [("Content-Type", "text/plain")], body: Array("x".utf8)).status == 415)
        let signIn = try client.request("POST", "/v1/auth/token", headers: [basic("frank", "frank-password")])
        #expect(signIn.status == 201)
    }

    @Test func catalogListsResourcesWithColumns() throws {
        let server = try TestServer()
        defer { server.stop() }
        let user = try server.user("hank")
        let response = try server.client().request("GET", "/v1", headers: [("Authorization", "Bearer \(user.token)")])
        #expect(response.status == 200)
        let resources = try #require(response.object["resources"] as? [[String: Any]])
        let names = resources.compactMap { $0["name"] as? String }
        #expect(names == ["class_members", "class_sets", "classes", "folder_sets", "folders", "set_collaborators", "study_sets", "terms"])
        let terms = try #require(resources.first { $0["name"] as? String == "terms" })
        #expect(terms["ranked"] as? Bool == true)
        let columns = try #require(terms["columns"] as? [[String: Any]])
        let setID = try #require(columns.first { $0["name"] as? String == "set_id" })
        #expect(setID["references"] as? String == "study_sets")
        #expect(setID["writable"] as? Bool == true)
        #expect(!columns.contains { ($0["name"] as? String ?? "").hasPrefix("_ferry") })
        let revision = try #require(columns.first { $0["name"] as? String == "revision" })
        #expect(revision["writable"] as? Bool == false)
        let joins = resources.filter { $0["join_table"] as? Bool == true }.compactMap { $0["name"] as? String }
        #expect(joins.sorted() == ["class_members", "class_sets", "folder_sets", "set_collaborators"])
        // What a client needs to act offline as the server would.
        #expect(terms["rank_scope"] as? String == "set_id")
        let sets = try #require(resources.first { $0["name"] as? String == "study_sets" })
        #expect(sets["rank_scope"] is NSNull)
        let creator = try #require((sets["columns"] as? [[String: Any]])?.first { $0["name"] as? String == "creator_id" })
        #expect(creator["has_default"] as? Bool == true, "the server fills creator_id with the caller")
        #expect(setID["has_default"] as? Bool == false)
        // Set once, when the term is created: a client refuses to change it offline.
        #expect(setID["updatable"] as? Bool == false && setID["comment"] is NSNull)
        #expect(columns.first { $0["name"] as? String == "word" }?["updatable"] as? Bool == true)
        let folderSets = try #require(resources.first { $0["name"] as? String == "folder_sets" })
        let keys = (folderSets["unique_keys"] as? [[String]] ?? []).map { $0.sorted() }
        #expect(keys.contains(["folder_id", "set_id"]), "\(keys)")
    }
}
