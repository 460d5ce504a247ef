/// Key rules of memcached's text protocol, checked before anything is sent so that a
/// bad key is a clear `.invalidKey` instead of a protocol error or a desynchronised
/// connection.
enum MemcachedKey {
    /// memcached's own limit (`KEY_MAX_LENGTH`).
    static let maxLength = 250

    /// Throws `.invalidKey` unless `key` is 1...250 bytes of printable ASCII without
    /// spaces. Non-ASCII bytes are refused too: memcached would accept them, but
    /// libmemcached's key check and other clients may not, and Ferry only needs tokens.
    static func validate(_ key: String) throws(MemcachedError) {
        let utf8 = key.utf8
        if utf8.isEmpty {
            throw MemcachedError(kind: .invalidKey, message: "empty key")
        }
        if utf8.count > maxLength {
            throw MemcachedError(
                kind: .invalidKey, message: "key of \(utf8.count) bytes exceeds \(maxLength)")
        }
        // 0x21...0x7E: no control characters, no space, no DEL, no bytes >= 0x80.
        if let bad = utf8.firstIndex(where: { $0 < 0x21 || $0 > 0x7E }) {
            let offset = utf8.distance(from: utf8.startIndex, to: bad)
            throw MemcachedError(
                kind: .invalidKey,
                message: "key byte \(offset) is 0x\(String(utf8[bad], radix: 16)); only printable ASCII without spaces is allowed")
        }
    }
}
