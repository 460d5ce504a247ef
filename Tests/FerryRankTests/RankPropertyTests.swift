import FerryRank
import Testing

/// Seeded random workloads against a model list; a failing seed reproduces exactly.
@Suite struct RankPropertyTests {
    static let seeds: [UInt64] = [1, 2, 3, 42, 1234, 0xDEAD_BEEF, 987_654_321, 31337]

    /// Keys stay short under random inserts, moves and deletes.
    static let lengthBound = 40

    @Test(arguments: seeds)
    func randomInsertsMovesAndDeletes(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var list: [String] = []
        // A "hot" index makes some runs of inserts cluster, as real editing does.
        var hot = 0
        for step in 0..<800 {
            let roll = Int.random(in: 0..<100, using: &rng)
            if roll < 55 || list.count < 2 {
                let index = roll < 30 ? min(hot, list.count) : Int.random(in: 0...list.count, using: &rng)
                try insert(into: &list, at: index)
                hot = index + (roll.isMultiple(of: 2) ? 1 : 0)
            } else if roll < 85 {
                let from = Int.random(in: 0..<list.count, using: &rng)
                list.remove(at: from)
                try insert(into: &list, at: Int.random(in: 0...list.count, using: &rng))
            } else {
                list.remove(at: Int.random(in: 0..<list.count, using: &rng))
            }
            #expect(strictlyIncreasing(list), "seed \(seed) step \(step)")
            guard strictlyIncreasing(list) else { return }
        }
        for key in list { try Rank.validate(key) }
        let longest = list.map(\.utf8.count).max() ?? 0
        #expect(longest <= Self.lengthBound, "seed \(seed): longest key \(longest)")
    }

    /// Inserts a fresh key at `index` of the model list, between its new neighbours.
    private func insert(into list: inout [String], at index: Int) throws {
        let a = index > 0 ? list[index - 1] : nil
        let b = index < list.count ? list[index] : nil
        let key = try Rank.between(a, b)
        try Rank.validate(key)
        list.insert(key, at: index)
    }

    /// For arbitrary valid keys a < b (drawn from a few digits so prefixes, adjacent digits,
    /// runs of "0" and "z" are common), `between` succeeds, lies strictly between, and is no
    /// longer than `max(a.count, b.count) + 1`.
    @Test(arguments: seeds)
    func betweenArbitraryValidKeys(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let digits: [Character] = ["0", "1", "2", "V", "W", "y", "z"]
        func randomKey() -> String {
            let length = Int.random(in: 1...8, using: &rng)
            var key = String((0..<length).map { _ in digits.randomElement(using: &rng)! })
            if key.last == "0" { key.removeLast(); key.append("1") }
            return key
        }
        var checked = 0
        while checked < 2000 {
            var a: String? = randomKey()
            var b: String? = randomKey()
            guard a != b else { continue }
            if bytewiseLess(b!, a!) { swap(&a, &b) }
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: a = nil
            case 1: b = nil
            default: break
            }
            let key = try Rank.between(a, b)
            try Rank.validate(key)
            if let a { #expect(bytewiseLess(a, key), "\(a) < \(key)") }
            if let b { #expect(bytewiseLess(key, b), "\(key) < \(b)") }
            let bound = max(a?.utf8.count ?? 0, b?.utf8.count ?? 0) + 1
            #expect(key.utf8.count <= bound, "between(\(a ?? "nil"), \(b ?? "nil")) = \(key)")
            checked += 1
        }
    }
}
