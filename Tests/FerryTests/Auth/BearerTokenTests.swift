import Crypto
import FerryHTTP
import Testing
@testable import Ferry

/// The byte-level `Authorization` parsing and hashing every request goes through.
@Suite struct BearerTokenTests {
    private let token = "abcdefghijklmnopqrstuvwxyzABCDEF0123456789-_x"

    private func parse(_ value: String?) -> String? {
        let headers = value.map { HTTPHeaders([("Authorization", $0)]) } ?? HTTPHeaders()
        return BearerToken.from(HTTPRequest(method: "GET", target: "/", path: "/", headers: headers))
    }

    @Test func acceptsTheSchemeInAnyCaseAndExtraSpaces() {
        #expect(parse("Bearer \(token)") == token)
        #expect(parse("bEaReR \(token)") == token)
        #expect(parse("BEARER    \(token)  ") == token)
        #expect(parse("  Bearer \(token)") == token)
        #expect(parse("Bearer \(token)\t") == token)
    }

    @Test func refusesAnythingElse() {
        for value: String? in [
            nil, "", "Bearer", "Bearer ", "Bearer  ", "Basic \(token)", "Bearer\t\(token)", "Bearer\(token)",
            "Bearers \(token)", "Bearer \(token) extra", "Bearer short", "Bearer \(token)=",
            "Bearer " + String(repeating: "a", count: 513), "Bëarer \(token)", "Bearer \(token)é",
        ] {
            #expect(parse(value) == nil, "\(value ?? "nil")")
        }
        #expect(parse("Bearer " + String(repeating: "a", count: 512)) == String(repeating: "a", count: 512))
        #expect(parse("Bearer " + String(repeating: "a", count: 16)) == String(repeating: "a", count: 16))
        #expect(parse("Bearer " + String(repeating: "a", count: 15)) == nil)
    }

    @Test func hashIsTheByteaLiteralOfSHA256() {
        let expected =
            "\\x"
            + SHA256.hash(data: Array(token.utf8)).map { byte in
                let hex = String(byte, radix: 16)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
        #expect(BearerToken.hash(token) == expected)
        #expect(BearerToken.hash(token).utf8.count == 66)
        // A known vector: SHA-256 of the empty string.
        #expect(BearerToken.hash("") == "\\xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// What the server's urgency test worked out on the I/O thread is the
    /// request's credential: the worker does not hash the token again.
    @Test func aCredentialLearnedBeforeIsTakenAsIs() {
        var request = HTTPRequest(method: "GET", target: "/", path: "/", headers: HTTPHeaders([("Authorization", "Bearer \(token)")]))
        #expect(BearerToken.credential(request) == .token(hash: BearerToken.hash(token)))
        request.learned = BearerToken.Learned(credential: .token(hash: "\\xfeed"))
        #expect(BearerToken.credential(request) == .token(hash: "\\xfeed"))
        request.learned = BearerToken.Learned(credential: nil)
        #expect(BearerToken.credential(request) == nil)
    }
}
