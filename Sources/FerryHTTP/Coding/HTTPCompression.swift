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
    static func compresses(contentType: String) -> Bool {
        let type = contentType.prefix { $0 != ";" }.trimmingASCIISpaces.lowercased()
        return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
    }
}
