import FerryHTTP

/// The request parser over a byte stream, pipelined requests and all. The first
/// byte seeds where the stream is cut; the rest is the stream.
///
/// Properties: the stream parsed whole, one byte at a time and in pseudo-random
/// pieces gives the same requests and the same refusal; every request is within
/// the limits and unambiguous (``RequestInvariants``); a refusal is a 4xx or 5xx
/// that closes the connection, and leaves the parser dead.
enum RequestSplitsFuzz {
    static func run(_ input: UnsafeRawBufferPointer) {
        guard let seed = input.first else { return }
        let stream = Array(input.dropFirst())
        let limits = HTTPLimits.fuzz
        let whole = ParserTranscript(stream, cuts: [], limits: limits)
        let pieces = ParserTranscript(stream, cuts: ParserTranscript.cuts(stream.count, seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15), limits: limits)
        require(
            pieces == whole,
            "pieces and whole differ: \(pieces.error as Any) vs \(whole.error as Any), \(pieces.requests.count) vs \(whole.requests.count) requests")
        // Byte by byte costs a call per byte; bounded so one input stays fast.
        if stream.count <= 1024 {
            let bytes = ParserTranscript(stream, cuts: ParserTranscript.everyByte(stream.count), limits: limits)
            require(bytes == whole, "byte by byte and whole differ: \(bytes.error as Any) vs \(whole.error as Any)")
        }
        for request in whole.requests { RequestInvariants.check(request.request, limits: limits) }
        if let error = whole.error {
            require((400...599).contains(error.status) && error.closeConnection, "refusal \(error)")
        }
    }
}
