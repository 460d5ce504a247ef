/// The state machine: head, then a fixed or chunked body, then the next head.
extension RequestParser {
    /// Runs phases until an event can be reported.
    mutating func advance(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> ParseEvent {
        while true {
            switch phase {
            case .head:
                guard try readHead(p) else { return .needMore }
                if let event = try finishHead(p) { return event }
            case .fixedBody(let remaining):
                let left = copyBody(p, upTo: remaining)
                guard left == 0 else {
                    phase = .fixedBody(remaining: left)
                    return .needMore
                }
                return .request(complete())
            case .chunkSize:
                guard try readChunkSize(p) else { return .needMore }
            case .chunkData(let remaining):
                let left = copyBody(p, upTo: remaining)
                guard left == 0 else {
                    phase = .chunkData(remaining: left)
                    return .needMore
                }
                phase = .chunkDataEnd
            case .chunkDataEnd:
                guard try readChunkDataEnd(p) else { return .needMore }
            case .trailers:
                guard try readTrailers(p) else { return .needMore }
                return .request(complete())
            }
        }
    }

    /// Decides framing once the head is complete. Returns the event to report now,
    /// or nil to go on reading the body.
    mutating func finishHead(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> ParseEvent? {
        guard let head = request else { preconditionFailure("head finished without a request line") }
        let framing = try MessageFraming.resolve(headers: head.headers, version: head.version, limits: limits)
        request?.keepAlive = framing.keepAlive
        switch framing.body {
        case .length(0):
            return .request(complete())
        case .length(let length):
            // Reserve for what is likely to come soon, not for what the client merely claims.
            body.reserveCapacity(min(length, Self.retainedCapacity))
            phase = .fixedBody(remaining: length)
        case .chunked:
            phase = .chunkSize
        }
        if framing.expectsContinue, readIndex == p.count { return .expectContinue }
        return nil
    }

    /// Moves up to `remaining` buffered bytes into the body; returns how many are still due.
    mutating func copyBody(_ p: UnsafeBufferPointer<UInt8>, upTo remaining: Int) -> Int {
        let take = min(remaining, p.count - readIndex)
        if take > 0 {
            body.append(contentsOf: bytes(p, readIndex..<(readIndex + take)))
            consume(upTo: readIndex + take)
        }
        return remaining - take
    }

    /// Hands out the assembled request and resets for the next one.
    mutating func complete() -> HTTPRequest {
        guard var done = request else { preconditionFailure("completing without a request") }
        request = nil
        done.body = body
        body = []
        phase = .head
        headerBytes = 0
        fieldCount = 0
        leadingEmptyLines = 0
        chunkExtensionBytes = 0
        return done
    }
}
