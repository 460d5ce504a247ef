/// A tiny deterministic PRNG so a failing seed reproduces exactly.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Bytewise order, as PostgreSQL `COLLATE "C"` compares.
func bytewiseLess(_ a: String, _ b: String) -> Bool {
    Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
}

/// Whether `keys` is strictly increasing bytewise.
func strictlyIncreasing(_ keys: [String]) -> Bool {
    zip(keys, keys.dropFirst()).allSatisfy { bytewiseLess($0, $1) }
}
