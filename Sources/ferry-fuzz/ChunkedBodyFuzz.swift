import FerryHTTP

/// Chunked decoding: the input is what follows the head of a chunked POST.
///
/// Properties, besides those of every request (``RequestInvariants``):
/// - whole, byte by byte and in pieces, the same outcome;
/// - a body in the plainest framing (hex size, CRLF, data, CRLF, then `0` CRLF CRLF;
///   see ``PlainChunked``) is accepted and decoded to exactly those bytes;
/// - a decoded body, chunked again differently (other sizes, extensions, a trailer),
///   decodes to the same body;
/// - a refusal is a 400, 413 or 431 and leaves the parser dead.
enum ChunkedBodyFuzz {
    static let head = Array("POST /v1/terms HTTP/1.1\r\nHost: fuzz\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)

    static func run(_ input: UnsafeRawBufferPointer) {
        let stream = head + Array(input)
        let limits = HTTPLimits.fuzz
        let whole = ParserTranscript(stream, cuts: [], limits: limits)
        let bytes = ParserTranscript(stream, cuts: ParserTranscript.everyByte(stream.count), limits: limits)
        require(bytes == whole, "byte by byte and whole differ: \(bytes.error as Any) vs \(whole.error as Any)")
        let pieces = ParserTranscript(stream, cuts: ParserTranscript.cuts(stream.count, seed: UInt64(input.count) + 1), limits: limits)
        require(pieces == whole, "pieces and whole differ: \(pieces.error as Any) vs \(whole.error as Any)")
        for request in whole.requests { RequestInvariants.check(request.request, limits: limits) }
        if whole.requests.isEmpty, let error = whole.error {
            require([400, 413, 431].contains(error.status), "chunked body refused with \(error.status)")
        }

        if let plain = PlainChunked.decode(Array(input)), plain.count <= limits.maxBodyBytes {
            require(whole.requests.first?.body == plain, "a plain chunked body was not decoded as written: \(whole.error as Any)")
        }
        if let body = whole.requests.first?.body {
            let again = ParserTranscript(head + rechunked(body), cuts: [], limits: limits)
            require(again.requests.count == 1 && again.requests[0].body == body, "a re-chunked body decoded differently: \(again.error as Any)")
        }
    }

    /// `body` in chunks of 7 bytes with extensions, a quoted one among them, and a trailer.
    static func rechunked(_ body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < body.count {
            let end = min(start + 7, body.count)
            out += Array("\(String(end - start, radix: 16)) ; n=v;q=\"a\\\"b\"\r\n".utf8) + body[start..<end] + [0x0D, 0x0A]
            start = end
        }
        return out + Array("0\r\nX-Trailer: t\r\n\r\n".utf8)
    }
}

/// The simplest chunked framing, decoded independently of the parser, as an oracle:
/// lowercase or uppercase hex sizes without extensions, no trailers.
enum PlainChunked {
    /// The body, or nil when `bytes` does not start with a complete body in that framing.
    static func decode(_ bytes: [UInt8]) -> [UInt8]? {
        var body: [UInt8] = []
        var i = 0
        while true {
            var size = 0
            let start = i
            while i < bytes.count, i - start < 8, let digit = hex(bytes[i]) {
                size = size * 16 + digit
                i += 1
            }
            guard i > start, i + 1 < bytes.count, bytes[i] == 0x0D, bytes[i + 1] == 0x0A else { return nil }
            i += 2
            if size == 0 {
                guard i + 1 < bytes.count, bytes[i] == 0x0D, bytes[i + 1] == 0x0A else { return nil }
                return body
            }
            guard i + size + 1 < bytes.count, bytes[i + size] == 0x0D, bytes[i + size + 1] == 0x0A else { return nil }
            body += bytes[i..<(i + size)]
            i += size + 2
        }
    }

    private static func hex(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }
}
