/// The request-target reduced to what a router needs (RFC 9112 §3.2).
struct RequestTarget {
    /// The target exactly as sent.
    var raw: String
    /// The percent-decoded path; `*` for asterisk-form, the authority for authority-form.
    var path: String
    /// The undecoded query without `?`, or nil.
    var rawQuery: String?
    /// The decoded query pairs.
    var query: [(name: String, value: String)]

    /// Recognises the four forms; `method` decides which are allowed.
    ///
    /// - origin-form `/p?q` for every method but CONNECT;
    /// - absolute-form `http://host/p?q` (http or https), reduced to path and query;
    /// - asterisk-form `*` for OPTIONS only;
    /// - authority-form `host:port` for CONNECT only.
    static func parse(_ t: UnsafeBufferPointer<UInt8>, method: String) throws(HTTPError) -> RequestTarget {
        let raw = String(decoding: t, as: UTF8.self)
        if method == "CONNECT" {
            try validateAuthorityForm(t)
            return RequestTarget(raw: raw, path: raw, rawQuery: nil, query: [])
        }
        if t[0] == ASCII.slash {
            return try pathAndQuery(t, raw: raw)
        }
        if t.count == 1, t[0] == ASCII.asterisk {
            guard method == "OPTIONS" else {
                throw .badRequest("The asterisk-form target `*` is only allowed with OPTIONS.")
            }
            return RequestTarget(raw: raw, path: "*", rawQuery: nil, query: [])
        }
        let rest = try stripAbsolutePrefix(t)
        return try pathAndQuery(rest, raw: raw)
    }

    /// Splits `path[?query]`, decoding both; an empty path (absolute-form `http://h`) becomes `/`.
    private static func pathAndQuery(_ t: UnsafeBufferPointer<UInt8>, raw: String) throws(HTTPError) -> RequestTarget {
        let q = t.firstIndex(of: ASCII.question) ?? t.count
        let pathBytes = UnsafeBufferPointer(rebasing: t[..<q])
        let path = pathBytes.isEmpty ? "/" : try PercentDecoding.path(pathBytes)
        guard q < t.count else { return RequestTarget(raw: raw, path: path, rawQuery: nil, query: []) }
        let queryBytes = UnsafeBufferPointer(rebasing: t[(q + 1)...])
        return RequestTarget(
            raw: raw, path: path, rawQuery: String(decoding: queryBytes, as: UTF8.self),
            query: try PercentDecoding.queryPairs(queryBytes))
    }

    /// Checks `scheme://authority` and returns what follows the authority.
    private static func stripAbsolutePrefix(_ t: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> UnsafeBufferPointer<UInt8> {
        let schemeLength: Int
        if hasPrefix(t, "http://") {
            schemeLength = 7
        } else if hasPrefix(t, "https://") {
            schemeLength = 8
        } else {
            throw .badRequest("The request target must be a path, an http(s) URI, `*` or host:port.")
        }
        var end = schemeLength
        while end < t.count, t[end] != ASCII.slash, t[end] != ASCII.question { end += 1 }
        let authority = UnsafeBufferPointer(rebasing: t[schemeLength..<end])
        guard !authority.isEmpty else { throw .badRequest("The absolute-form target has no host.") }
        // RFC 9110 §4.2.4: userinfo in an http(s) URI is to be treated as an error (phishing, confusion).
        guard !authority.contains(ASCII.at) else { throw .badRequest("The target must not carry userinfo.") }
        return UnsafeBufferPointer(rebasing: t[end...])
    }

    /// `authority-form = uri-host ":" port`, with a non-empty host and a numeric port.
    private static func validateAuthorityForm(_ t: UnsafeBufferPointer<UInt8>) throws(HTTPError) {
        guard let colon = t.lastIndex(of: ASCII.colon), colon > 0, colon < t.count - 1,
            t[(colon + 1)...].allSatisfy(ASCII.isDigit), t.count - colon - 1 <= 5,
            !t.contains(ASCII.slash), !t.contains(ASCII.at), !t.contains(ASCII.question)
        else {
            throw .badRequest("CONNECT needs an authority-form target `host:port`.")
        }
    }

    /// ASCII case-insensitive prefix test (schemes are case-insensitive, RFC 3986 §3.1).
    private static func hasPrefix(_ t: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        let p = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard t.count >= p.count else { return false }
        for i in 0..<p.count where ASCII.lower(t[i]) != p[i] { return false }
        return true
    }
}
