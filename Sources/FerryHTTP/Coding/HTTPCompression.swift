/// How the server compresses answers.
///
/// Bodies of JSON types (`application/json`, `application/problem+json`, any
/// `+json`) are compressed when the request's `Accept-Encoding` allows gzip
/// or deflate: in-memory bodies from `minimumBytes` up, streamed bodies
/// always, as they stream. Coded request bodies (`Content-Encoding: gzip` or
/// `deflate`) are decoded whatever these settings say.
public struct HTTPCompression: Sendable, Equatable {
    /// zlib's level, 1 (fastest) to 9 (smallest); 0 turns response compression off.
    public var level: Int
    /// The smallest in-memory body worth compressing; smaller ones go as they are.
    public var minimumBytes: Int

    /// Settings; the defaults favour throughput (level 1) and skip bodies under 1 KiB,
    /// which gain little and would cost a deflate stream each.
    public init(level: Int = 1, minimumBytes: Int = 1024) {
        self.level = max(0, min(9, level))
        self.minimumBytes = max(0, minimumBytes)
    }

    /// Whether a `Content-Type` value names a JSON type, the types the server compresses.
    ///
    /// On the value's bytes: every answer asks, and the String version (prefix,
    /// trim, lowercased) was a noticeable share of even a /healthz answer.
    static func compresses(contentType: String) -> Bool {
        if let answer = contentType.utf8.withContiguousStorageIfAvailable({ compresses(type: $0) }) { return answer }
        return Array(contentType.utf8).withUnsafeBufferPointer { compresses(type: $0) }
    }

    private static func compresses(type value: UnsafeBufferPointer<UInt8>) -> Bool {
        // The media type: up to any parameters, without the spaces around it.
        var end = value.firstIndex(of: UInt8(ascii: ";")) ?? value.count
        var start = 0
        while start < end, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
        while end > start, value[end - 1] == 0x20 || value[end - 1] == 0x09 { end -= 1 }
        let type = UnsafeBufferPointer(rebasing: value[start..<end])
        guard startsCaseInsensitively(type, with: "application/") else { return false }
        let subtype = UnsafeBufferPointer(rebasing: type[12...])
        if subtype.count == 4 { return startsCaseInsensitively(subtype, with: "json") }
        return subtype.count >= 5 && startsCaseInsensitively(UnsafeBufferPointer(rebasing: subtype[(subtype.count - 5)...]), with: "+json")
    }

    /// Whether `bytes` begin with `word` (lowercase ASCII), letters compared without case.
    private static func startsCaseInsensitively(_ bytes: UnsafeBufferPointer<UInt8>, with word: StaticString) -> Bool {
        guard bytes.count >= word.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for index in 0..<expected.count {
            var byte = bytes[index]
            if byte >= 0x41, byte <= 0x5A { byte |= 0x20 }
            guard byte == expected[index] else { return false }
        }
        return true
    }
}
