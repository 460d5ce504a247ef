import CZlib

/// The writing end of a streamed response body, handed to an `HTTPBodyProducer`.
///
/// Small writes are gathered into one segment so that the connection is not
/// woken per write; a segment is handed on once it reaches `segmentBytes`,
/// and the producer waits until the client has taken it.
///
/// When the response is compressed, the writer compresses as it goes: the
/// producer writes plain bytes and the client receives the coded stream.
public struct HTTPBodyWriter {
    private var buffer: [UInt8] = []
    private let chunked: Bool
    /// Set when the body goes out content-coded.
    private var deflater: Deflater?
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

    /// Compresses everything written from now on.
    mutating func startCoding(_ coding: ContentCoding, level: Int) {
        guard coding != .identity, bytesWritten == 0 else { return }
        deflater = Deflater(coding: coding, level: level)
    }

    /// Appends body bytes; throws when the client has gone away.
    public mutating func write(_ bytes: some Collection<UInt8>) throws {
        guard !bytes.isEmpty else { return }
        bytesWritten += bytes.count
        if let deflater {
            let plain = Array(bytes)
            plain.withUnsafeBytes { input in deflater.compress(input, mode: Z_NO_FLUSH) { frame($0) } }
        } else {
            frame(bytes)
        }
        if buffer.count >= segmentBytes { try handOn() }
    }

    /// Appends bytes as they go on the wire: one chunk each when chunked.
    private mutating func frame(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        if chunked {
            ChunkFraming.appendChunkHeader(count: bytes.count, to: &buffer)
            buffer.append(contentsOf: bytes)
            buffer.append(contentsOf: ChunkFraming.crlf)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    /// Appends the UTF-8 bytes of a string.
    public mutating func write(_ text: String) throws {
        try write(Array(text.utf8))
    }

    /// Hands any gathered bytes to the connection now; a compressed body is
    /// sync-flushed, so the client can decode everything written so far.
    public mutating func flush() throws {
        if let deflater {
            deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), mode: Z_SYNC_FLUSH) { frame($0) }
        }
        try handOn()
    }

    private mutating func handOn() throws {
        guard !buffer.isEmpty else { return }
        let segment = buffer
        buffer.removeAll(keepingCapacity: true)
        try sink(segment)
    }

    /// Flushes and appends the terminating chunk; called by the server once the producer returns.
    mutating func finish() throws {
        if let deflater {
            deflater.compress(UnsafeRawBufferPointer(start: nil, count: 0), mode: Z_FINISH) { frame($0) }
            self.deflater = nil
        }
        if chunked { buffer.append(contentsOf: ChunkFraming.lastChunk) }
        try handOn()
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
