// The request line (RFC 9112 §3): method, target and version, the target reduced
// to a path and query, and the percent-decoding of both.

/// A parsed request line: `method SP request-target SP HTTP-version` (RFC 9112 §3).
struct RequestLine {
    var method: String
    var target: RequestTarget
    var version: HTTPVersion

    /// Parses one request line, CRLF already removed.
    ///
    /// Separators are exactly one SP each; the method is a token, the target
    /// holds visible ASCII only, and the version is `HTTP/DIGIT.DIGIT`.
    static func parse(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> RequestLine {
        var i = 0
        while i < line.count, ASCII.isTchar(line[i]) { i += 1 }
        guard i > 0, i < line.count, line[i] == ASCII.space else {
            throw .badRequest("The request line must start with a method token followed by one space.")
        }
        let methodEnd = i
        i += 1
        let targetStart = i
        while i < line.count, line[i] != ASCII.space {
            guard ASCII.isTargetByte(line[i]) else {
                throw .badRequest("The request target contains a forbidden character.")
            }
            i += 1
        }
        guard i > targetStart, i < line.count else {
            throw .badRequest("The request line must be `method SP target SP version`.")
        }
        let targetEnd = i
        let version = try parseVersion(UnsafeBufferPointer(rebasing: line[(i + 1)...]))
        let method = String(decoding: UnsafeBufferPointer(rebasing: line[..<methodEnd]), as: UTF8.self)
        let target = try RequestTarget.parse(
            UnsafeBufferPointer(rebasing: line[targetStart..<targetEnd]), method: method)
        return RequestLine(method: method, target: target, version: version)
    }

    /// `HTTP-version = "HTTP" "/" DIGIT "." DIGIT`, case-sensitive; a major other than 1 is 505.
    static func parseVersion(_ v: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> HTTPVersion {
        guard v.count == 8,
            v[0] == UInt8(ascii: "H"), v[1] == UInt8(ascii: "T"), v[2] == UInt8(ascii: "T"),
            v[3] == UInt8(ascii: "P"), v[4] == ASCII.slash,
            ASCII.isDigit(v[5]), v[6] == ASCII.dot, ASCII.isDigit(v[7])
        else {
            throw .badRequest("The protocol version must be `HTTP/1.1` or `HTTP/1.0`.")
        }
        let version = HTTPVersion(major: Int(v[5] - 0x30), minor: Int(v[7] - 0x30))
        guard version.major == 1 else { throw .versionNotSupported(version) }
        return version
    }
}

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

/// Percent-decoding of request-target parts (RFC 3986 §2.1). `package`: a batch's
/// operations name their targets in JSON, and are held to the same rules.
package enum PercentDecoding {
    /// Decodes a path. `+` stays `+`. Invalid escapes, decoded control characters
    /// (NUL, CR, LF... which could be smuggled into logs or headers) and invalid
    /// UTF-8 are refused.
    package static func path(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> String {
        // The request line only lets visible ASCII through, so without escapes there is nothing to check.
        guard bytes.contains(ASCII.percent) else { return String(decoding: bytes, as: UTF8.self) }
        let decoded = try decode(bytes, plusIsSpace: false, part: "path")
        guard !decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw .badRequest("The path contains an encoded control character.")
        }
        return try utf8(decoded, part: "path")
    }

    /// Splits a query on `&` and `=`, decoding names and values with `+` as space.
    /// Empty pairs (`a&&b`) are skipped; a name without `=` gets an empty value.
    /// Invalid escapes, an encoded NUL and invalid UTF-8 are refused.
    package static func queryPairs(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != ASCII.ampersand { end += 1 }
            if end > start {
                let pair = UnsafeBufferPointer(rebasing: bytes[start..<end])
                let eq = pair.firstIndex(of: ASCII.equals) ?? pair.count
                let name = try queryComponent(UnsafeBufferPointer(rebasing: pair[..<eq]))
                let value = eq < pair.count ? try queryComponent(UnsafeBufferPointer(rebasing: pair[(eq + 1)...])) : ""
                pairs.append((name: name, value: value))
            }
            start = end + 1
        }
        return pairs
    }

    private static func queryComponent(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> String {
        let decoded = try decode(bytes, plusIsSpace: true, part: "query")
        guard !decoded.contains(0) else { throw .badRequest("The query contains an encoded NUL.") }
        return try utf8(decoded, part: "query")
    }

    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool, part: String) throws(HTTPError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == ASCII.percent {
                guard i + 2 < bytes.count, let hi = ASCII.hexValue(bytes[i + 1]), let lo = ASCII.hexValue(bytes[i + 2])
                else { throw .badRequest("The \(part) contains an invalid percent-escape.") }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(plusIsSpace && b == ASCII.plus ? ASCII.space : b)
                i += 1
            }
        }
        return out
    }

    private static func utf8(_ bytes: [UInt8], part: String) throws(HTTPError) -> String {
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw .badRequest("The decoded \(part) is not valid UTF-8.")
        }
        return s
    }
}
