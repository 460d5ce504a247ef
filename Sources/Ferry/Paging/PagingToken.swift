import Crypto

/// A paging token: what a client holds to read later pages of a snapshot.
///
/// 29 bytes, sent as 39 characters of URL-safe base64 (no padding):
///
/// | bytes | meaning |
/// |---|---|
/// | 0 | format version (1) |
/// | 1...4 | expiry, Unix seconds, big-endian |
/// | 5...20 | 128 random bits (`SystemRandomNumberGenerator`) |
/// | 21...28 | binding tag: the first 8 bytes of SHA-256(random ‖ expiry ‖ binding fingerprint) |
///
/// The expiry travels in the token because memcached cannot tell an expired item
/// from one that never existed: an absent snapshot whose token has expired answers
/// 410, one whose token has not answers 404. The random part makes tokens
/// unguessable; the memcached keys are a hash of the whole token, so editing the
/// expiry names another (absent) snapshot, and a memcached key dump yields no
/// usable token. The tag lets an expired token be checked against the caller's
/// binding without the (gone) snapshot, so a stranger's expired token is a 404 too;
/// it covers the expiry, so a token whose expiry was edited into the past is no token
/// Ferry issued (404), not an expired one (410).
public struct PagingToken: Sendable, Equatable {
    /// The current format version.
    static let version: UInt8 = 1
    static let byteCount = 29
    /// The text length (URL-safe base64 of 29 bytes, unpadded).
    public static let textLength = 39

    /// When the snapshot stops being served, Unix seconds.
    public let expiresAt: UInt32
    /// The 16 random bytes.
    let secret: [UInt8]
    /// The 8-byte binding tag.
    let tag: [UInt8]

    /// A new token for a snapshot bound to `fingerprint`, valid until `expiresAt`.
    static func issue(expiresAt: UInt32, fingerprint: PagingFingerprint) -> PagingToken {
        var generator = SystemRandomNumberGenerator()
        var secret = [UInt8](repeating: 0, count: 16)
        for index in secret.indices { secret[index] = UInt8.random(in: .min ... .max, using: &generator) }
        return PagingToken(expiresAt: expiresAt, secret: secret, tag: Self.tag(secret: secret, expiresAt: expiresAt, fingerprint: fingerprint))
    }

    private init(expiresAt: UInt32, secret: [UInt8], tag: [UInt8]) {
        self.expiresAt = expiresAt
        self.secret = secret
        self.tag = tag
    }

    /// Parses the text form; nil for anything Ferry could not have issued
    /// (wrong length, alphabet or version).
    public init?(parsing text: String) {
        guard text.utf8.count == Self.textLength, let bytes = Base64URL.decode(text),
            bytes.count == Self.byteCount, bytes[0] == Self.version
        else { return nil }
        expiresAt = bytes[1...4].reduce(0) { $0 << 8 | UInt32($1) }
        secret = Array(bytes[5...20])
        tag = Array(bytes[21...28])
    }

    /// The binary form.
    var bytes: [UInt8] {
        [
            Self.version, UInt8(expiresAt >> 24), UInt8(expiresAt >> 16 & 0xff), UInt8(expiresAt >> 8 & 0xff),
            UInt8(expiresAt & 0xff),
        ] + secret + tag
    }

    /// The text form clients see.
    public var text: String { Base64URL.encode(bytes) }

    /// Whether this token was issued for `fingerprint`.
    func isBound(to fingerprint: PagingFingerprint) -> Bool {
        Self.tag(secret: secret, expiresAt: expiresAt, fingerprint: fingerprint) == tag
    }

    /// The prefix of every memcached key of this snapshot: a hash of the whole token.
    var storageKey: String {
        "ferry:pg:" + Base64URL.encode(Array(SHA256.hash(data: bytes)))
    }

    private static func tag(secret: [UInt8], expiresAt: UInt32, fingerprint: PagingFingerprint) -> [UInt8] {
        let expiry = [UInt8(expiresAt >> 24), UInt8(expiresAt >> 16 & 0xff), UInt8(expiresAt >> 8 & 0xff), UInt8(expiresAt & 0xff)]
        return Array(SHA256.hash(data: secret + expiry + fingerprint.bytes).prefix(8))
    }
}
