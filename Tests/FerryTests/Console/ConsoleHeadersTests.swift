import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// docs/CONSOLE.md promises the security headers on every console answer. Issue 48
/// found every refusal of `/console/api` bare: the headers were added to what a
/// handler returned, not to the problems it threw, nor to the router's 404 and 405.
/// This asks every operation the OpenAPI document lists for each status it can
/// give (and an unknown path), and checks every answer.
@Suite struct ConsoleHeadersTests {
    @Test func everyConsoleAnswerErrorsIncludedCarriesTheSecurityHeaders() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let user = try fixture.server.user("jo")
        let set = try fixture.app("POST", "/v1/study_sets", token: user.token, json: ["title": "Verbs"]).object["id"] as? String ?? ""
        let tokenID = try #require(
            (try fixture.console("GET", "/users/\(user.id)").object["tokens"] as? [[String: Any]])?
                .first?["id"] as? String)
        let document = try fixture.server.client().request("GET", "/openapi.json").object
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let unknown = "00000000-0000-4000-8000-000000000000"
        func concrete(_ path: String, found: Bool) -> String {
            path.replacingOccurrences(of: "{user}", with: found ? user.id : unknown)
                .replacingOccurrences(of: "{id}", with: found ? set : unknown)
                .replacingOccurrences(of: "{token}", with: found ? tokenID : unknown)
        }
        let client = fixture.server.client()
        var answers: [(String, TestHTTPClient.Response)] = []
        func ask(_ method: String, _ path: String, token: String?, json: Any? = nil) throws {
            let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
            answers.append(
                (
                    "\(method) \(path) as \(token == nil ? "nobody" : token == fixture.viewer ? "viewer" : "admin")",
                    try client.request(method, path, headers: headers, json: json)
                ))
        }
        var operations = 0
        for (path, item) in paths where path.hasPrefix("/console/") && path != "/console/api/session" {
            for method in ["get", "post", "delete"] where item[method] != nil {
                operations += 1
                let verb = method.uppercased()
                let found = concrete(path, found: true)
                try ask(verb, found, token: nil)  // 401
                try ask(
                    verb, concrete(path, found: false), token: fixture.admin,
                    json: verb == "POST" ? ["confirm": true] : nil)  // 404 where an id is unknown
                try ask("PUT", found, token: fixture.admin)  // 405
                if verb == "GET" {
                    try ask(verb, found + "?limit=0", token: fixture.admin)  // 400 where limit is read
                    try ask(verb, found, token: fixture.viewer)  // 200
                } else {
                    try ask(verb, found, token: fixture.admin, json: ["confirm": "yes"])  // 400
                    try ask(verb, found, token: fixture.admin, json: [String: Any]())  // 422
                    try ask(verb, found, token: fixture.viewer, json: ["confirm": true])  // 403
                }
            }
        }
        #expect(operations >= 20)
        // The session: signed in, wrong credentials, locked out, signed out.
        let basic = { (password: String) in [("Authorization", "Basic " + Data("dana:\(password)".utf8).base64EncodedString())] }
        answers.append(("POST /session", try client.request("POST", "/console/api/session", headers: basic("dana-password"))))
        for _ in 0..<12 { answers.append(("POST /session wrong", try client.request("POST", "/console/api/session", headers: basic("nope-nope")))) }
        try ask("GET", "/console/api/session", token: fixture.viewer)
        try ask("GET", "/console/api/no-such-route", token: fixture.admin)
        try ask("DELETE", "/console/api/session", token: fixture.viewer)
        try ask("GET", "/console/", token: nil)
        try ask("GET", "/console/no-such-page.js", token: nil)
        // An empty segment changes nothing: the router answers it from the console's routes.
        try ask("GET", "//console/api/session", token: fixture.viewer)
        try ask("GET", "/console//api/session", token: fixture.viewer)

        for (asked, response) in answers {
            for (name, value) in ConsoleSecurityHeaders.all {
                #expect(response.header(name) == value, "\(asked) → \(response.status) lacks \(name)")
            }
            if asked.contains("/console/api") || asked.hasPrefix("POST /session") {
                #expect(response.header("Cache-Control") == "no-store", "\(asked) → \(response.status)")
            }
        }
        let statuses = Set(answers.map(\.1.status))
        #expect(statuses.isSuperset(of: [200, 201, 204, 400, 401, 403, 404, 405, 422, 429]), "\(statuses.sorted())")
    }
}
