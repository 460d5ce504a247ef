/// Entity tags (RFC 9110 §8.8.3). A row's ETag is `"<revision>"`; a
/// collection's is a fingerprint of the rows in the answer.
enum EntityTag {
    /// `"<revision>"`.
    static func revision(_ revision: String) -> String { "\"\(revision)\"" }

    /// The opaque tags of an `If-None-Match` or `If-Match` list, `W/` kept
    /// apart; nil means `*`.
    static func parseList(_ value: String) -> [(weak: Bool, opaque: String)]? {
        var tags: [(Bool, String)] = []
        var rest = Substring(value)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { break }
            if rest.hasPrefix("*") { return nil }
            var weak = false
            if rest.hasPrefix("W/") { weak = true; rest = rest.dropFirst(2) }
            guard rest.hasPrefix("\"") else {
                // Not a tag: skip to the next comma; it matches nothing.
                rest = rest.drop { $0 != "," }
                continue
            }
            rest = rest.dropFirst()
            guard let end = rest.firstIndex(of: "\"") else { break }
            tags.append((weak, String(rest[..<end])))
            rest = rest[rest.index(after: end)...]
        }
        return tags
    }

    /// Weak comparison (If-None-Match): `*` or any tag with the same opaque value.
    static func noneMatchHits(_ header: String?, etag: String) -> Bool {
        guard let header else { return false }
        guard let tags = parseList(header) else { return true }
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return tags.contains { "\"\($0.opaque)\"" == opaque }
    }

    /// The revisions an `If-None-Match` header names, as ``noneMatchHits``
    /// compares them (weak tags count; the tag must be the revision exactly
    /// as Ferry writes it, so `"03"` names nothing); nil for `*`, no header or
    /// no revision named.
    static func noneMatchRevisions(_ header: String?) -> [Int64]? {
        guard let header, let tags = parseList(header) else { return nil }
        let revisions = tags.compactMap { tag in Int64(tag.opaque).flatMap { String($0) == tag.opaque ? $0 : nil } }
        return revisions.isEmpty ? nil : revisions
    }

    /// The revisions an `If-Match` header accepts (strong comparison: weak
    /// tags and non-revisions accept nothing); nil for `*`.
    static func matchRevisions(_ header: String) -> [Int64]? {
        guard let tags = parseList(header) else { return nil }
        return tags.compactMap { $0.weak ? nil : Int64($0.opaque) }
    }
}
