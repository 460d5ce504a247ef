import Foundation

/// A JWT in compact serialization (RFC 7519), split and decoded but not yet
/// verified: what the header asks for, the claims, and the bytes the
/// signature covers.
///
/// Strict, since every byte comes from the client: three base64url parts
/// without padding, a header and a payload that are JSON objects nested at
/// most ``maxDepth`` deep, no `crit` header (Ferry implements no extension,
/// RFC 7515 §4.1.11), no string holding U+0000 (PostgreSQL's `jsonb`, where
/// the claims go, cannot hold it), no member name twice in one object
/// (``JSONDuplicateMembers``), and at most ``maxBytes`` in all.
package struct CompactJWT: Sendable {
    /// The longest token read. Identity providers' access tokens are 1 to 2 KiB;
    /// a token with hundreds of group claims stays under this.
    package static let maxBytes = 8192
    /// The deepest nesting of arrays and objects read in the header or payload.
    static let maxDepth = 16

    /// The header's `alg`, as written: only compared, never used to pick a key's algorithm.
    package let algorithm: String
    /// The header's `kid`, if any.
    package let keyID: String?
    /// The header's `typ`, if any (``JWTTypeCheck`` reads it).
    package let type: String?
    /// The payload's members.
    let claims: [String: JSONConfigValue]
    /// `header.payload`, the bytes the signature covers.
    let signingInput: [UInt8]
    /// The decoded signature.
    let signature: [UInt8]

    package init(_ token: String) throws(JWTRefusal) {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maxBytes else { throw .tooLarge }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("it must have three parts separated by dots") }
        guard let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]) else {
            throw .malformed("the header and payload must be unpadded base64url")
        }
        // Empty is read (and then fails to verify), so that `alg: none` gets its own refusal.
        guard let signature = Base64URL.decode(parts[2]) else { throw .malformed("the signature must be unpadded base64url") }
        let header = try Self.object(headerBytes, part: "header")
        guard case .string(let algorithm)? = header["alg"] else { throw .malformed("the header has no alg string") }
        var keyID: String?
        switch header["kid"] {
        case nil: keyID = nil
        case .string(let kid)?: keyID = kid
        default: throw .malformed("the header's kid is not a string")
        }
        switch header["typ"] {
        case nil: type = nil
        case .string(let typ)?: type = typ
        default: throw .malformed("the header's typ is not a string")
        }
        if header["crit"] != nil { throw .malformed("the header has a crit member, and Ferry implements no extension") }
        self.algorithm = algorithm
        self.keyID = keyID
        claims = try Self.object(payloadBytes, part: "payload")
        signingInput = Array(bytes[..<(parts[0].count + 1 + parts[1].count)])
        self.signature = signature
    }

    /// The JSON object `bytes` holds.
    private static func object(_ bytes: [UInt8], part: String) throws(JWTRefusal) -> [String: JSONConfigValue] {
        guard JSONDepth.within(bytes, limit: maxDepth) else {
            throw .malformed("the \(part) nests deeper than \(maxDepth) levels")
        }
        // Not JSONDecoder: it throws for each wrong guess at a value's type (``JSONTokenParser``).
        guard let value = JSONTokenParser.value(bytes) else {
            throw .malformed("the \(part) is not JSON, or holds a number no double holds (such as 1e999)")
        }
        guard case .object(let members) = value else { throw .malformed("the \(part) is not a JSON object") }
        // Named in the refusal: a member name is not a claim's value, and says what to fix.
        if let name = JSONDuplicateMembers.first(in: bytes) {
            throw .malformed("the \(part) has the member \(String(name.prefix(64)).debugDescription) twice")
        }
        guard !value.containsNUL else { throw .malformed("the \(part) holds U+0000") }
        return members
    }
}

extension Base64URL {
    /// ``decode(_:)`` over the bytes of one part of a token.
    static func decode(_ part: ArraySlice<UInt8>) -> [UInt8]? {
        decode(String(decoding: part, as: UTF8.self))
    }
}

/// How deep a JSON text nests, counted on its bytes before any parser sees
/// it, so that a hostile token cannot make the decoder recurse without bound.
enum JSONDepth {
    /// Whether no array or object in `bytes` nests deeper than `limit`
    /// (brackets inside strings do not count).
    static func within(_ bytes: [UInt8], limit: Int) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return false }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return true
    }
}

extension JSONConfigValue {
    /// Whether any string in the value, a member name included, holds U+0000.
    var containsNUL: Bool {
        switch self {
        case .string(let text): text.utf8.contains(0)
        case .array(let items): items.contains { $0.containsNUL }
        case .object(let members): members.contains { $0.key.utf8.contains(0) || $0.value.containsNUL }
        case .null, .bool, .integer, .number: false
        }
    }
}
