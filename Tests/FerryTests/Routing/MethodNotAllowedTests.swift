import FerryTestSupport
import Foundation
import Testing

/// A path Ferry knows answers 405 with `Allow` for every method it does not
/// serve, never 404: the literal routes (`/v1/auth/me`, `/v1/batch`, ...) are
/// not resources, whatever the method. The method check comes before
/// `Idempotency-Key` handling, so a refused method stores nothing. Router-level:
/// what is answered, not how it travels.
@Suite struct MethodNotAllowedTests {
    @Test(arguments: [
        ("PUT", "/v1/auth/me", "GET, HEAD"),
        ("DELETE", "/v1/auth/me", "GET, HEAD"),
        ("POST", "/v1/auth/me", "GET, HEAD"),
        ("PATCH", "/v1/auth/me", "GET, HEAD"),
        ("PUT", "/v1/auth/token", "DELETE, POST"),
        ("GET", "/v1/auth/token", "DELETE, POST"),
        ("PATCH", "/v1/batch", "POST"),
        ("GET", "/v1/batch", "POST"),
        ("DELETE", "/v1/batch", "POST"),
        ("POST", "/v1/changes", "GET, HEAD"),
        ("DELETE", "/v1", "GET, HEAD"),
    ])
    func knownPathWrongMethod(method: String, path: String, allow: String) throws {
        let app = try TestApp()
        defer { app.stop() }
        let me = try app.user("caller")
        let response = try app.router.request(
            method, path,
            headers: [
                ("Authorization", "Bearer \(me.token)"), ("Content-Type", "application/json"),
                ("Idempotency-Key", "method-check"),
            ],
            body: Array("{}".utf8))
        #expect(response.status == 405, "\(method) \(path): \(response.text)")
        #expect(response.header("Allow") == allow, "\(method) \(path)")
        #expect(response.object["code"] as? String == "method_not_allowed")
        let stored = try app.ownerQuery("SELECT count(*) FROM ferry.idempotency_keys WHERE key = 'method-check'")
        #expect(stored.rows[0][0] == "0")
    }

    /// Resources keep answering through the parameter routes.
    @Test func resourcesStillRoute() throws {
        let app = try TestApp()
        defer { app.stop() }
        let me = try app.user("caller")
        let wrong = try app.router.request("PUT", "/v1/study_sets", headers: [("Authorization", "Bearer \(me.token)")])
        #expect(wrong.status == 405)
        #expect(wrong.header("Allow")?.contains("PATCH") == true)
        let list = try app.router.request("GET", "/v1/study_sets", headers: [("Authorization", "Bearer \(me.token)")])
        #expect(list.status == 200)
    }
}
