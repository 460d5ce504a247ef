/// `If-None-Match` against the `since` cursor, by weak comparison (RFC 9110 §13.1.2).
enum IfNoneMatch {
    static func matches(_ header: String?, token: String?) -> Bool {
        guard let header else { return false }
        for item in header.split(separator: ",") {
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if let token, tag == "\"\(token)\"" { return true }
        }
        return false
    }
}
