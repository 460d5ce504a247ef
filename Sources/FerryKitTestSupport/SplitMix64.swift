/// A seeded generator (SplitMix64): the same seed draws the same operations
/// and faults, so a failing seed can be run again.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

    /// A random element, or nil for an empty collection.
    mutating func pick<C: RandomAccessCollection>(_ items: C) -> C.Element? where C.Index == Int {
        items.isEmpty ? nil : items[items.startIndex + Int(next() % UInt64(items.count))]
    }
}
