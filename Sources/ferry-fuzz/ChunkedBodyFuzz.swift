import FerryHTTP

/// Chunked decoding: the input is what follows the head of a chunked POST.
///
/// Properties, besides those of every request (``RequestInvariants``):
/// - whole, byte by byte and in pieces, the same outcome;
/// - followed by another request, the parser ends the body exactly where the chunked
///   grammar (``ChunkedGrammar``, written apart from the parser) says a complete body
///   ends, with the same bytes, and takes nothing the grammar refuses;
/// - a decoded body, chunked again differently (other sizes, extensions, a trailer),
///   decodes to the same body;
/// - a refusal is a 400, 413 or 431 and leaves the parser dead.
enum ChunkedBodyFuzz {
    static let head = Array("POST /v1/terms HTTP/1.1\r\nHost: fuzz\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    static let sentinel = Array("GET /sentinel HTTP/1.1\r\nHost: fuzz\r\n\r\n".utf8)
    static let sentinelRequest = ParserTranscript(sentinel, cuts: [], limits: .fuzz).requests.first

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

        // With a request after it, the parser shows where it thinks the body ended: the grammar
        // and the parser must agree on what is a complete body and on its bytes.
        let framed = ParserTranscript(stream + sentinel, cuts: [], limits: limits)
        // The whole request, method included: trailing bytes can prefix the sentinel's method.
        let endsAtSentinel = framed.requests.count == 2 && framed.requests[1] == sentinelRequest
        // The head holds 2 fields of 40 bytes; trailers share the header budget with them.
        let verdict = ChunkedGrammar.judge(
            Array(input), bodyLimit: limits.maxBodyBytes, trailerBytes: limits.maxHeaderBytes - 40, trailerFields: limits.maxHeaderCount - 2)
        switch verdict {
        case .valid(let body):
            require(endsAtSentinel && framed.requests[0].body == body, "a valid chunked body was not read as written: \(framed.error as Any)")
        case .invalid:
            require(!endsAtSentinel, "the parser took as one body what the grammar refuses")
        case .notJudged:
            break
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
