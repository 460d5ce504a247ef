import Crypto
import FerryBase
import FerryHTTP
import Glibc

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
        var token = token
        let digest = token.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        // Runs on every authenticated request: one allocation (the result), no per-byte strings.
        return String(unsafeUninitializedCapacity: 2 + 2 * SHA256.byteCount) { out in
            out[0] = UInt8(ascii: "\\")
            out[1] = UInt8(ascii: "x")
            var at = 2
            digest.withUnsafeBytes { bytes in
                for byte in bytes {
                    out[at] = hexDigits[Int(byte >> 4)]
                    out[at + 1] = hexDigits[Int(byte & 0x0f)]
                    at += 2
                }
            }
            return at
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The token of an `Authorization: Bearer <token>` header, or nil.
    /// The scheme is case-insensitive (RFC 9110 §11.1); the token must look
    /// like one Ferry issues, so junk never reaches the database.
    public static func from(_ request: HTTPRequest) -> String? {
        guard var value = request.headers["Authorization"] else { return nil }
        return value.withUTF8 { bytes -> String? in
            guard let token = bearer(bytes), isFerryToken(token) else { return nil }
            return String(decoding: token, as: UTF8.self)
        }
    }

    /// A request's credential worked out on the I/O thread by the server's
    /// urgency test (``HTTPRequest/learned``): the token is hashed once a request.
    struct Learned: Sendable {
        let credential: Credential?
    }

    /// What the request's `Authorization: Bearer` carries: one of Ferry's
    /// tokens, a JWT (anything with a dot, so that a malformed one gets its
    /// reason), or nil for neither.
    package static func credential(_ request: HTTPRequest) -> Credential? {
        if let learned = request.learned as? Learned { return learned.credential }
        guard var value = request.headers["Authorization"] else { return nil }
        return value.withUTF8 { bytes -> Credential? in
            guard let token = bearer(bytes) else { return nil }
            if token.contains(UInt8(ascii: ".")) {
                let text = String(decoding: token, as: UTF8.self)
                return .jwt(hash: hash(text), token: text)
            }
            guard isFerryToken(token) else { return nil }
            return .token(hash: hash(String(decoding: token, as: UTF8.self)))
        }
    }

    /// The bytes after `Bearer` and its whitespace, trailing whitespace
    /// dropped; nil for another scheme or an empty token. Byte-level on
    /// purpose: this runs on every authenticated request.
    private static func bearer(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        var start = 0
        while start < bytes.count, bytes[start] == space { start += 1 }
        guard bytes.count - start > scheme.count else { return nil }
        for (offset, letter) in scheme.enumerated() where bytes[start + offset] | 0x20 != letter { return nil }
        start += scheme.count
        guard bytes[start] == space else { return nil }
        while start < bytes.count, isWhitespace(bytes[start]) { start += 1 }
        var end = bytes.count
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        guard end > start else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// Whether `token` could be one Ferry issued: 16 to 512 base64url characters.
    private static func isFerryToken(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        (16...512).contains(token.count) && token.allSatisfy(Base64URL.isAlphabet)
    }

    /// `bearer`, lowercase: compared against the header with ASCII letters folded.
    private static let scheme: [UInt8] = Array("bearer".utf8)
    private static let space = UInt8(ascii: " ")

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == UInt8(ascii: "\t") }
}
