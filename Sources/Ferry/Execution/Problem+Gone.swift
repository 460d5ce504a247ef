import FerryHTTP

extension Problem {
    /// 410 `gone` whose body carries the tombstone's fields, and the tombstone as
    /// `current`: the one shape of every 410 on a row, read or write (docs/API.md).
    /// Fields that would collide with the problem's own members stay in `current` only.
    static func gone(tombstone: String, etag: String?) -> Problem {
        var extra: [(String, JSONValue)] = []
        // The tombstone's fields as PostgreSQL wrote them, in key order.
        let bytes = Array(tombstone.utf8)
        let reserved: Set<String> = ["type", "title", "status", "code", "detail", "current"]
        let fields = (ObjectMembers(bytes)?.members ?? []).map { (String(decoding: bytes[$0.key], as: UTF8.self), $0.valueBytes) }
        for (key, value) in fields.sorted(by: { $0.0 < $1.0 }) where !reserved.contains(key) {
            extra.append((key, .raw(Array(bytes[value]))))
        }
        extra.append(("current", .raw(bytes)))
        var headers = HTTPHeaders()
        if let etag { headers.add("ETag", etag) }
        return Problem(410, .gone, "the row is deleted", extra: extra, headers: headers)
    }
}
