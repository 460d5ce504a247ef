import FerryHTTP

/// Entity tags (RFC 9110 §8.8.3). A row's ETag is `"<revision>"`; a
/// collection's is a fingerprint of the rows in the answer.
enum EntityTag {
    /// `"<revision>"`.
    static func revision(_ revision: Revision) -> String { revision.etag }

    /// The opaque tags of an `If-None-Match` or `If-Match` list, `W/` kept
    /// apart; nil means `*`.
    static func parseList(_ value: String) -> [(weak: Bool, opaque: String)]? {
        // Over the bytes: every conditional request parses its list (a 304 parses it
        // twice), and walking Characters cost more than the rest of the 304 answer.
        var value = value
        return value.withUTF8 { bytes -> [(weak: Bool, opaque: String)]? in
            let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
            var tags: [(weak: Bool, opaque: String)] = []
            var at = 0
            while true {
                while at < bytes.count, bytes[at] == UInt8(ascii: " ") || bytes[at] == UInt8(ascii: "\t") || bytes[at] == comma {
                    at += 1
                }
                if at == bytes.count { break }
                if bytes[at] == UInt8(ascii: "*") { return nil }
                var weak = false
                if bytes.count - at >= 2, bytes[at] == UInt8(ascii: "W"), bytes[at + 1] == UInt8(ascii: "/") {
                    weak = true
                    at += 2
                }
                guard at < bytes.count, bytes[at] == quote else {
                    // Not a tag: skip to the next comma; it matches nothing.
                    while at < bytes.count, bytes[at] != comma { at += 1 }
                    continue
                }
                at += 1
                guard let end = bytes[at...].firstIndex(of: quote) else { break }
                tags.append((weak, String(decoding: UnsafeBufferPointer(rebasing: bytes[at..<end]), as: UTF8.self)))
                at = end + 1
            }
            return tags
        }
    }

    /// The opaque value of `etag` without its quotes (`W/` dropped), for
    /// weak comparison; nil when it is not a quoted tag.
    static func opaque(_ etag: String) -> String? {
        var opaque = Substring(etag)
        if opaque.hasPrefix("W/") { opaque = opaque.dropFirst(2) }
        guard opaque.count >= 2, opaque.first == "\"", opaque.last == "\"" else { return nil }
        return String(opaque.dropFirst().dropLast())
    }

    /// The revisions an `If-Match` header accepts (strong comparison: weak
    /// tags and non-revisions accept nothing); nil for `*`.
    static func matchRevisions(_ header: String) -> [Revision]? {
        guard let tags = parseList(header) else { return nil }
        return tags.compactMap { $0.weak ? nil : Revision(parsing: $0.opaque) }
    }
}
