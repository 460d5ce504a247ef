/// Percent-decoding of request-target parts (RFC 3986 §2.1).
enum PercentDecoding {
    /// Decodes a path. `+` stays `+`. Invalid escapes, decoded control characters
    /// (NUL, CR, LF... which could be smuggled into logs or headers) and invalid
    /// UTF-8 are refused.
    static func path(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> String {
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
    static func queryPairs(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> [(name: String, value: String)] {
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
