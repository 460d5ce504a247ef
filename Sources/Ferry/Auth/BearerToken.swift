import Crypto
import FerryHTTP

/// Bearer tokens: 256 random bits, URL-safe base64, stored only as a SHA-256 hash.
public enum BearerToken {
    /// A new token from the system's cryptographic random source.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// The hash the database stores, as a `bytea` text literal (`\x…`), so the
    /// token itself never reaches PostgreSQL or its logs.
    public static func hash(_ token: String) -> String {
        let digest = SHA256.hash(data: Array(token.utf8))
        return "\\x" + digest.map { hex[Int($0 >> 4)] + hex[Int($0 & 0x0f)] }.joined()
    }

    private static let hex = (0..<16).map { String($0, radix: 16) }

    /// The token of an `Authorization: Bearer <token>` header, or nil.
    /// The scheme is case-insensitive (RFC 9110 §11.1); the token must look
    /// like one Ferry issues, so junk never reaches the database.
    public static func from(_ request: HTTPRequest) -> String? {
        guard let value = request.headers["Authorization"] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard (16...512).contains(token.utf8.count), token.utf8.allSatisfy(Base64URL.isAlphabet) else { return nil }
        return token
    }
}
