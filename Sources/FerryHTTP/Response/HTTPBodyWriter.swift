/// The writing end of a streamed response body, handed to an `HTTPBodyProducer`.
///
/// Small writes are gathered into one segment so that the connection is not
/// woken per write; a segment is handed on once it reaches `segmentBytes`,
/// and the producer waits until the client has taken it.
public struct HTTPBodyWriter {
    private var buffer: [UInt8] = []
    private let chunked: Bool
    private let segmentBytes: Int
    private let sink: (_ segment: [UInt8]) throws -> Void
    /// Body bytes written so far (framing excluded).
    public private(set) var bytesWritten: Int = 0

    /// A writer that frames as chunked or not and passes full segments to `sink`.
    init(chunked: Bool, segmentBytes: Int = 64 * 1024, sink: @escaping (_ segment: [UInt8]) throws -> Void) {
        self.chunked = chunked
        self.segmentBytes = segmentBytes
        self.sink = sink
    }

    /// Appends body bytes; throws when the client has gone away.
    public mutating func write(_ bytes: some Collection<UInt8>) throws {
        guard !bytes.isEmpty else { return }
        if chunked {
            ChunkFraming.appendChunkHeader(count: bytes.count, to: &buffer)
            buffer.append(contentsOf: bytes)
            buffer.append(contentsOf: ChunkFraming.crlf)
        } else {
            buffer.append(contentsOf: bytes)
        }
        bytesWritten += bytes.count
        if buffer.count >= segmentBytes { try flush() }
    }

    /// Appends the UTF-8 bytes of a string.
    public mutating func write(_ text: String) throws {
        try write(Array(text.utf8))
    }

    /// Hands any gathered bytes to the connection now.
    public mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        let segment = buffer
        buffer.removeAll(keepingCapacity: true)
        try sink(segment)
    }

    /// Flushes and appends the terminating chunk; called by the server once the producer returns.
    mutating func finish() throws {
        if chunked { buffer.append(contentsOf: ChunkFraming.lastChunk) }
        try flush()
    }
}

/// Byte patterns of chunked transfer coding (RFC 9112 §7.1).
enum ChunkFraming {
    static let crlf: [UInt8] = [13, 10]
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func appendChunkHeader(count: Int, to buffer: inout [UInt8]) {
        var digits: [UInt8] = []
        var n = count
        repeat {
            digits.append(hexDigits[n & 0xF])
            n >>= 4
        } while n > 0
        buffer.append(contentsOf: digits.reversed())
        buffer.append(contentsOf: crlf)
    }
}
