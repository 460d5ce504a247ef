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
        // Byte-level on purpose: this runs on every authenticated request.
        return value.withUTF8 { bytes -> String? in
            var start = 0
            while start < bytes.count, bytes[start] == space { start += 1 }
            guard bytes.count - start > scheme.count else { return nil }
            for (offset, letter) in scheme.enumerated() where bytes[start + offset] | 0x20 != letter { return nil }
            start += scheme.count
            guard bytes[start] == space else { return nil }
            while start < bytes.count, isWhitespace(bytes[start]) { start += 1 }
            var end = bytes.count
            while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
            let token = UnsafeBufferPointer(rebasing: bytes[start..<end])
            guard (16...512).contains(token.count), token.allSatisfy(Base64URL.isAlphabet) else { return nil }
            return String(decoding: token, as: UTF8.self)
        }
    }

    /// `bearer`, lowercase: compared against the header with ASCII letters folded.
    private static let scheme: [UInt8] = Array("bearer".utf8)
    private static let space = UInt8(ascii: " ")

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == UInt8(ascii: "\t") }
}

/// URL-safe base64 without padding (RFC 4648 §5), for tokens that travel in
/// headers and query strings unescaped.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isAlphabet(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2d || byte == 0x5f
    }
}

extension Base64URL {
    /// Decodes unpadded URL-safe base64; nil for any other character or an
    /// impossible length. Strict: the unused low bits of the last character must be
    /// zero, so every byte string has exactly one accepted spelling.
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        if input.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            guard let value = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(accumulator >> UInt32(bits) & 0xff))
            }
        }
        if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5a: byte - 0x41
        case 0x61...0x7a: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case 0x2d: 62
        case 0x5f: 63
        default: nil
        }
    }
}
