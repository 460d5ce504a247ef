/// The chunked transfer coding (RFC 9112 §7.1), de-chunked straight into the body.
extension RequestParser {
    /// Fields that must not arrive as trailers because they frame, route, authenticate or
    /// condition the request (RFC 9110 §6.5.1); they are counted against the limits and dropped,
    /// so a handler never sees one that the head did not carry.
    static let forbiddenTrailers: Set<String> = [
        "authorization", "cache-control", "connection", "content-encoding", "content-length",
        "content-range", "content-type", "cookie", "expect", "host", "if-match", "if-modified-since",
        "if-none-match", "if-range", "if-unmodified-since", "keep-alive", "max-forwards",
        "proxy-authorization", "range", "te", "trailer", "transfer-encoding", "upgrade",
    ]

    static func isForbiddenTrailer(_ name: String) -> Bool {
        forbiddenTrailers.contains(String(decoding: name.utf8.map(ASCII.lower), as: UTF8.self))
    }

    /// Reads a chunk-size line; true when it was complete.
    mutating func readChunkSize(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        switch try scanLine(p, limit: Self.maxChunkLineBytes) {
        case .needMore:
            return false
        case .tooLong:
            throw .badRequest("A chunk size line exceeds \(Self.maxChunkLineBytes) bytes.")
        case .line(let content, let next):
            let (size, extensionBytes) = try ChunkSizeLine.parse(bytes(p, content))
            consume(upTo: next)
            // Without a total, tiny chunks with long extensions would let a client stream far
            // more than maxBodyBytes through the parser while staying under the body limit.
            chunkExtensionBytes += extensionBytes
            guard chunkExtensionBytes <= Self.maxChunkExtensionBytes else {
                throw .badRequest("Chunk extensions exceed \(Self.maxChunkExtensionBytes) bytes in total.")
            }
            if size == 0 {
                phase = .trailers
            } else {
                // Refuse before reading: the declared chunk alone would cross the limit.
                guard size <= UInt64(limits.maxBodyBytes - body.count) else {
                    throw .payloadTooLarge(limit: limits.maxBodyBytes)
                }
                phase = .chunkData(remaining: Int(size))
            }
            return true
        }
    }

    /// Reads the CRLF that must follow chunk data; true when it was there.
    mutating func readChunkDataEnd(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        let available = p.count - readIndex
        if available >= 1, p[readIndex] != ASCII.cr || (available >= 2 && p[readIndex + 1] != ASCII.lf) {
            throw .badRequest("Chunk data must be followed by CRLF.")
        }
        guard available >= 2 else { return false }
        consume(upTo: readIndex + 2)
        phase = .chunkSize
        return true
    }

    /// Reads the trailer section; true once its empty line is read.
    mutating func readTrailers(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        try readFieldLines(p, trailers: true)
    }
}
