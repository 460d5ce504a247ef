/// What a user's name may be: a Ferry user's name, and a JWT user's lookup
/// name (``JWTProvider/lookupName(in:)``); `GET /v1/users/lookup`
/// (``UserLookupRoute``) takes either. In Auth because the JWT check uses it.
enum UserName {
    /// What a Ferry user name may be (`ferry.users`' `users_name_format`, at
    /// most 128 bytes), and a lookup name too (``JWTProvider/lookupName(in:)``,
    /// at most 320 bytes): a name outside it cannot exist, so it is a 400 naming the rule.
    static func isValid(_ name: String, maxBytes: Int = 128) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...maxBytes).contains(bytes.count) else { return false }
        func allowed(_ byte: UInt8, first: Bool) -> Bool {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"):
                return true
            case UInt8(ascii: "."), UInt8(ascii: "@"), UInt8(ascii: "+"), UInt8(ascii: "-"): return !first
            default: return false
            }
        }
        return bytes.enumerated().allSatisfy { allowed($0.element, first: $0.offset == 0) }
    }
}
