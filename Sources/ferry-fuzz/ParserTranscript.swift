import FerryHTTP

/// What a `RequestParser` made of a byte stream delivered in pieces, driven the
/// way the server's event loop drives it: append what arrived, then `next()` until
/// it wants more, answering `expectContinue` by asking again.
struct ParserTranscript: Equatable {
    /// The complete requests, in order.
    var requests: [ParsedRequest] = []
    /// The refusal that ended the stream; nil when the parser still wants bytes.
    var error: HTTPError?

    /// Parses `bytes` delivered as pieces ending at each of `cuts` (ascending) and at the end.
    init(_ bytes: [UInt8], cuts: [Int], limits: HTTPLimits) {
        var parser = RequestParser(limits: limits)
        var start = 0
        for end in cuts + [bytes.count] where end > start {
            parser.append(Array(bytes[start..<end]))
            start = end
            guard drain(&parser) else { break }
        }
        if let error {
            // A refused stream leaves the parser dead: every later call repeats the refusal.
            parser.append([0x47])
            guard case .error(let again) = parser.next() else { require(false, "the parser came back to life after \(error)"); return }
            require(again == error, "a dead parser answered \(again) after \(error)")
        }
    }

    /// Takes every event the buffered bytes allow; false once the parser refused.
    private mutating func drain(_ parser: inout RequestParser) -> Bool {
        while true {
            switch parser.next() {
            case .needMore: return true
            case .expectContinue: continue
            case .request(let request): requests.append(ParsedRequest(request))
            case .error(let error):
                self.error = error
                return false
            }
        }
    }

    /// Cut points after every byte: the slowest client.
    static func everyByte(_ count: Int) -> [Int] { Array(stride(from: 1, to: count, by: 1)) }

    /// Pseudo-random cut points from `seed`, pieces of 1 to 64 bytes, the same for the same seed.
    static func cuts(_ count: Int, seed: UInt64) -> [Int] {
        var state = seed | 1
        var cuts: [Int] = []
        var at = 0
        while true {
            // xorshift64: cheap, and the same cuts every time an input is replayed.
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            at += Int(state % 64) + 1
            guard at < count else { return cuts }
            cuts.append(at)
        }
    }
}
