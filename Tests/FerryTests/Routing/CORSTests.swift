import FerryTestSupport
import Testing

/// CORS for browser apps, router-level: the middleware answers preflights and marks answers.
@Suite struct CORSTests {
    static let app = "https://app.example.com"

    private func server() throws -> TestApp {
        try TestApp { $0.cors.allowedOrigins = [Self.app, "http://localhost:3000"] }
    }

    @Test func preflightIsAnsweredWithoutAuthentication() throws {
        let server = try server()
        defer { server.stop() }
        let response = try server.router.request(
            "OPTIONS", "/v1/terms/1",
            headers: [
                ("Origin", Self.app), ("Access-Control-Request-Method", "PATCH"),
                ("Access-Control-Request-Headers", "authorization, content-type, if-match"),
            ])
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == Self.app)
        let methods = response.header("Access-Control-Allow-Methods") ?? ""
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] { #expect(methods.contains(method)) }
        let headers = (response.header("Access-Control-Allow-Headers") ?? "").lowercased()
        for header in ["authorization", "content-type", "if-match", "idempotency-key"] { #expect(headers.contains(header)) }
        #expect(Int(response.header("Access-Control-Max-Age") ?? "") ?? 0 > 0)
        #expect(response.header("Vary") == "Origin")
        #expect(response.body.isEmpty)
    }

    @Test func actualResponsesExposeTheSyncHeaders() throws {
        let server = try server()
        defer { server.stop() }
        let alice = try server.user("alice")
        let client = server.router
        for (headers, status) in [([("Authorization", "Bearer \(alice.token)")], 200), ([], 401)] {
            let response = try client.request("GET", "/v1/auth/me", headers: headers + [("Origin", "http://localhost:3000")])
            #expect(response.status == status)
            #expect(response.header("Access-Control-Allow-Origin") == "http://localhost:3000")
            let exposed = response.header("Access-Control-Expose-Headers") ?? ""
            for header in ["ETag", "Link", "Retry-After", "Idempotent-Replayed", "Location", "Last-Modified", "X-Request-Id"] {
                #expect(exposed.contains(header), "\(header) not exposed")
            }
            #expect(response.header("Vary")?.contains("Origin") == true)
        }
    }

    /// The app's origins are for the app's API: the console answers no origin, so a
    /// script on one of them cannot read what an operator's token reads.
    @Test func theConsoleAnswersNoOriginTheAppAllows() throws {
        let server = try server()
        defer { server.stop() }
        let client = server.router
        let preflight = try client.request(
            "OPTIONS", "/console/api/session", headers: [("Origin", Self.app), ("Access-Control-Request-Method", "POST")])
        #expect(preflight.status != 204, "\(preflight.status)")
        #expect(preflight.headers.allSatisfy { !$0.name.lowercased().hasPrefix("access-control-") }, "\(preflight.headers)")
        for path in ["/console/api/session", "/console/", "/console", "//console/api/session", "/console//api/session"] {
            let actual = try client.request("GET", path, headers: [("Origin", Self.app)])
            #expect(actual.headers.allSatisfy { !$0.name.lowercased().hasPrefix("access-control-") }, "\(path): \(actual.headers)")
        }
        // A path that only begins like it is the app's.
        let app = try client.request("GET", "/consoles", headers: [("Origin", Self.app)])
        #expect(app.header("Access-Control-Allow-Origin") == Self.app)
    }

    @Test func disallowedOriginGetsNoCORSHeaders() throws {
        let server = try server()
        defer { server.stop() }
        let client = server.router
        let preflight = try client.request(
            "OPTIONS", "/v1/terms",
            headers: [
                ("Origin", "https://evil.example"), ("Access-Control-Request-Method", "POST"),
            ])
        #expect(preflight.status != 204)
        #expect(preflight.headers.allSatisfy { !$0.name.lowercased().hasPrefix("access-control-") })
        let actual = try client.request("GET", "/healthz", headers: [("Origin", "https://evil.example")])
        #expect(actual.status == 200)
        #expect(actual.headers.allSatisfy { !$0.name.lowercased().hasPrefix("access-control-") })
        #expect(actual.header("Vary")?.contains("Origin") == true)
    }

    @Test func corsIsOffByDefault() throws {
        let server = try TestApp()
        defer { server.stop() }
        let client = server.router
        let preflight = try client.request(
            "OPTIONS", "/v1/auth/me",
            headers: [
                ("Origin", Self.app), ("Access-Control-Request-Method", "GET"),
            ])
        #expect(preflight.status == 405)
        #expect(preflight.header("Access-Control-Allow-Origin") == nil)
        let actual = try client.request("GET", "/healthz", headers: [("Origin", Self.app)])
        #expect(actual.header("Access-Control-Allow-Origin") == nil)
        // Vary: Accept-Encoding is compression's; CORS adds no Vary: Origin when off.
        #expect(!actual.headers.contains { $0.name.lowercased() == "vary" && $0.value.contains("Origin") })
    }
}
