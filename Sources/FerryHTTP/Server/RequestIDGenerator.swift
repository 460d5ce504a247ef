// The per-loop maker of request ids, and the check a client-sent `X-Request-Id`
// must pass to be used instead.

/// Request ids: a safe client-sent `X-Request-Id`, or a generated one.
struct RequestIDGenerator {
    private var counter: UInt64
    private let prefix: [UInt8]
    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// A generator whose ids start with 8 random hex digits, unique per loop.
    init() {
        let random = UInt64.random(in: 0...UInt64.max)
        var prefix: [UInt8] = []
        for shift in stride(from: 60, through: 32, by: -4) { prefix.append(Self.hex[Int((random >> UInt64(shift)) & 0xF)]) }
        self.prefix = prefix
        counter = random & 0xFFFF_FFFF
    }

    /// The next id: 8 hex digits of loop prefix and 12 of counter, written straight
    /// into the string's storage (one allocation per request, not three).
    mutating func next() -> String {
        counter &+= 1
        let counter = counter
        return prefix.withUnsafeBufferPointer { prefix in
            String(unsafeUninitializedCapacity: 20) { out in
                for index in 0..<8 { out[index] = prefix[index] }
                for index in 0..<12 {
                    let digit = UInt8((counter >> UInt64(44 - 4 * index)) & 0xF)
                    out[8 + index] = digit < 10 ? 48 + digit : 87 + digit
                }
                return 20
            }
        }
    }

    /// The client's id when it is 1...128 characters of `A-Z a-z 0-9 - _ . :`, else nil,
    /// so that nothing a client sends can forge log lines or headers.
    static func accepted(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 128 else { return nil }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                UInt8(ascii: "."), UInt8(ascii: ":"):
                continue
            default:
                return nil
            }
        }
        return value
    }
}
