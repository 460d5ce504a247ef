import FerryHTTP
import Foundation
import Testing

@Suite("Responses and router without sockets")
struct ResponseUnitTests {
    @Test func problemHasMembersInOrderAndExtensions() throws {
        // Extensions go after status and before detail; one named like a member the
        // problem writes itself is dropped.
        let response = HTTPResponse.problem(
            status: 409, detail: "stale \"x\"",
            extensions: [
                ("code", "revision_conflict"), ("current", .raw(Array(#"{"id":1}"#.utf8))),
                ("conflicting_fields", ["title"]), ("status", 200),
            ])
        #expect(response.status == 409)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        guard case .bytes(let bytes) = response.body else {
            Issue.record("not bytes")
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"type":"about:blank","title":"Conflict","status":409,"code":"revision_conflict","current":{"id":1}"#))
        #expect(text.hasSuffix(#""detail":"stale \"x\""}"#))
        let object = try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect((object["current"] as? [String: Any])?["id"] as? Int == 1)
        #expect(object["conflicting_fields"] as? [String] == ["title"])
    }

    @Test func routerSplitsOnSlashBytesWhateverTheSegmentsHold() {
        var router = Router()
        router.get("/v1/:resource/:id") { _, _ in .text("") }
        guard case .found(_, let parameters) = router.match(method: "GET", path: "//v1/t\u{E9}rms/\u{301}x\u{1F600}/") else {
            Issue.record("no match")
            return
        }
        #expect(parameters["resource"] == "t\u{E9}rms")
        #expect(parameters["id"] == "\u{301}x\u{1F600}")
        // A combining mark right after a slash does not glue the slash to the next segment.
        if case .found(_, let parameters) = router.match(method: "GET", path: "/v1/a/\u{301}") {
            #expect(parameters["id"] == "\u{301}")
        } else {
            Issue.record("combining mark after a slash")
        }
    }

    /// Segments longer than every literal at their level skip the literal
    /// lookup; literals of any length must still win over parameters.
    @Test func routerMatchesLongLiteralsAndLongerParameters() {
        var router = Router()
        let literal = "a-literal-segment-longer-than-fifteen-bytes"
        router.get("/v1/:resource") { _, _ in .text("") }
        router.get("/v1/\(literal)") { _, _ in .text("") }
        func pattern(_ path: String) -> String? {
            if case .found(let pattern, _) = router.match(method: "GET", path: path) { return pattern }
            return nil
        }
        #expect(pattern("/v1/\(literal)") == "/v1/\(literal)")
        #expect(pattern("/v1/\(literal)x") == "/v1/:resource")
        #expect(pattern("/v1/\(literal.dropLast())") == "/v1/:resource")
        #expect(pattern("/v1/" + String(repeating: "z", count: 200)) == "/v1/:resource")
        #expect(pattern("/v1/terms") == "/v1/:resource")
    }

    @Test func routerDecidesInlineByPathUnlessAnInlineRouteHasParameters() {
        func request(_ method: String, _ path: String) -> HTTPRequest { HTTPRequest(method: method, target: path, path: path) }
        var router = Router()
        router.get("/healthz", inline: true) { _, _ in .text("") }
        router.get("/v1/:resource/:id") { _, _ in .text("") }
        #expect(router.runsInline(request("GET", "/healthz")))
        #expect(router.runsInline(request("HEAD", "/healthz")))
        #expect(!router.runsInline(request("GET", "/v1/terms/1")))
        #expect(!router.runsInline(request("GET", "/nowhere")))
        #expect(!router.runsInline(request("GET", "/healthy")), "as long as an inline path, but another")
        #expect(!router.runsInline(request("GET", "/healthz/x")), "longer than every inline path")
        var withParameter = router
        withParameter.get("/v1/fast/:id", inline: true) { _, _ in .text("") }
        #expect(withParameter.runsInline(request("GET", "/v1/fast/7")))
        #expect(withParameter.runsInline(request("GET", "/healthz")))
        #expect(!withParameter.runsInline(request("GET", "/v1/terms/1")))
    }

    @Test func routerMatchesLiteralFirstAndReportsAllow() {
        var router = Router()
        router.get("/v1/:resource") { _, _ in .text("") }
        router.post("/v1/:resource") { _, _ in .text("") }
        router.get("/v1/changes") { _, _ in .text("") }
        guard case .found(let pattern, let parameters) = router.match(method: "GET", path: "/v1/terms") else {
            Issue.record("no match")
            return
        }
        #expect(pattern == "/v1/:resource")
        #expect(parameters["resource"] == "terms")
        if case .found(let pattern, _) = router.match(method: "GET", path: "/v1/changes") {
            #expect(pattern == "/v1/changes")
        } else {
            Issue.record("literal did not match")
        }
        // The literal path owns every method: POST does not fall through to the parameter route.
        if case .methodNotAllowed(let allow) = router.match(method: "POST", path: "/v1/changes") {
            #expect(allow == ["GET", "HEAD"])
        } else {
            Issue.record("POST on a literal path that serves only GET should be 405")
        }
        if case .methodNotAllowed(let allow) = router.match(method: "DELETE", path: "/v1/x") {
            #expect(allow == ["GET", "HEAD", "POST"])
        } else {
            Issue.record("expected 405")
        }
        if case .notFound = router.match(method: "GET", path: "/v2/x") {} else { Issue.record("expected 404") }
        if case .found = router.match(method: "HEAD", path: "/v1/x") {} else { Issue.record("HEAD should use GET") }
    }

    @Test func jsonStringsAreEscaped() throws {
        let value: JSONValue = .string("a\"b\\c\n\u{01}")
        #expect(String(decoding: value.bytes, as: UTF8.self) == #""a\"b\\c\n\u0001""#)
        #expect(String(decoding: JSONValue.string("\u{1F}\u{0B}\u{7F}").bytes, as: UTF8.self) == "\"\\u001f\\u000b\u{7F}\"")
        // Every ASCII byte, alone, at the edges and between multibyte text, reads back as itself.
        for code in 0..<128 {
            let c = String(UnicodeScalar(UInt8(code)))
            for text in [c, "ü" + c + "x€", c + c + "plain" + c, String(repeating: "é", count: 40) + c] {
                let bytes = JSONValue.array([.string(text)]).bytes
                let parsed = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String]
                #expect(parsed == [text], "byte \(code)")
            }
        }
        #expect(JSONValue.string("").bytes == [34, 34])
    }
}
