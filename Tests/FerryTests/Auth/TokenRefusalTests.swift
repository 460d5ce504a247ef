import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 21's token checks. Ferry never compares a token's bytes with a stored
/// secret: it looks the token up by its SHA-256 hash (in the database, or in the
/// process's cache of recent checks, also keyed by hash), so the time a lookup
/// takes says nothing about how close a guess was. What an attacker can see is
/// the answer; this test holds that every way of not being signed in gets the
/// same one.
@Suite struct TokenRefusalTests {
    /// The answer with what legitimately differs per request taken out.
    static func shape(_ response: TestHTTPClient.Response) -> String {
        let headers = response.headers
            .filter { !["date", "x-request-id", "content-length"].contains($0.name.lowercased()) }
            .map { "\($0.name.lowercased()): \($0.value)" }.sorted()
        var body = response.object
        body["instance"] = nil
        body["request_id"] = nil
        let text = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return "\(response.status)\n\(headers.joined(separator: "\n"))\n\(text)"
    }

    @Test func missingMalformedWrongNearMissExpiredAndRevokedTokensGetOneAnswer() throws {
        let server = try TestServer()
        defer { server.stop() }
        let expired = try server.user("expired_token")
        _ = try server.ownerQuery("UPDATE ferry.tokens SET expires_at = now() - interval '1 second' WHERE user_id = $1::uuid", [expired.id])
        let revoked = try server.user("revoked_token")
        let client = server.client()
        #expect(try client.request("DELETE", "/v1/auth/token", headers: [("Authorization", "Bearer \(revoked.token)")]).status == 204)
        let valid = try server.user("valid_token")
        // The valid token with its last character changed: the closest guess there is.
        var nearMiss = Array(valid.token)
        nearMiss[nearMiss.count - 1] = nearMiss.last == "A" ? "B" : "A"

        let ways: [(String, [(String, String)])] = [
            ("no header", []),
            ("another scheme", [("Authorization", "Basic \(valid.token)")]),
            ("too short", [("Authorization", "Bearer abc")]),
            ("not base64url", [("Authorization", "Bearer \(String(repeating: "!", count: 43))")]),
            ("well formed, never issued", [("Authorization", "Bearer \(String(repeating: "A", count: 43))")]),
            ("one character off a valid token", [("Authorization", "Bearer \(String(nearMiss))")]),
            ("expired", [("Authorization", "Bearer \(expired.token)")]),
            ("revoked", [("Authorization", "Bearer \(revoked.token)")]),
        ]
        var shapes: [String: [String]] = [:]
        for path in ["/v1/auth/me", "/v1/study_sets", "/v1/changes"] {
            for (what, headers) in ways {
                let response = try client.request("GET", path, headers: headers)
                #expect(response.status == 401, "\(what) on \(path): \(response.status)")
                shapes[Self.shape(response), default: []].append("\(what) on \(path)")
            }
        }
        #expect(shapes.count == 1, "one answer for every way, on every path: \(shapes)")
        #expect(
            try client.request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(valid.token)")]).status == 200,
            "the valid token itself still works")
    }
}
