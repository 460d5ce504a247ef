import FerryRank
import Testing

/// 1,000 inserts in a row at one spot must keep keys short (under 50 characters).
@Suite struct RankHotspotTests {
    static let inserts = 1000
    /// Adjacent digits, a "z"-ended key, and long fixed keys (the long fixed neighbour is
    /// mistaken for the recently generated one until new keys outgrow it).
    static let neighbours: [(String, String)] = [
        ("V", "W"), ("1", "2"), ("a1b2c3", "a1b2c4"), ("Vz", "W"),
        ("Vabcdefghijklmnopqrst", "W"), ("V", "Vabcdefghijklmnopqrst"),
    ]

    /// Runs `step` `inserts` times on a list that starts as `initial`, checks order after
    /// each insert, and returns the longest key.
    private func run(_ initial: [String], _ step: ([String]) throws -> (index: Int, key: String)) throws -> Int {
        var list = initial
        for _ in 0..<Self.inserts {
            let (index, key) = try step(list)
            list.insert(key, at: index)
            if index > 0 { #expect(bytewiseLess(list[index - 1], key)) }
            if index + 1 < list.count { #expect(bytewiseLess(key, list[index + 1])) }
        }
        #expect(strictlyIncreasing(list))
        return list.map(\.utf8.count).max()!
    }

    @Test(arguments: neighbours)
    func justAfterAFixedKey(a: String, b: String) throws {
        // list[0] is fixed; each new key goes between it and the previous new key.
        let longest = try run([a, b]) { list in (1, try Rank.between(list[0], list[1])) }
        #expect(longest < 50)
    }

    @Test(arguments: neighbours)
    func justBeforeAFixedKey(a: String, b: String) throws {
        let longest = try run([a, b]) { list in
            (list.count - 1, try Rank.between(list[list.count - 2], list[list.count - 1]))
        }
        #expect(longest < 50)
    }

    @Test(arguments: [nil, "V", "1", "0001", "zz"] as [String?])
    func atTheFront(start: String?) throws {
        let initial = start.map { [$0] } ?? []
        let longest = try run(initial) { list in (0, try Rank.first(before: list.first)) }
        #expect(longest < 50)
    }

    @Test(arguments: [nil, "V", "z", "zzzy", "1"] as [String?])
    func atTheEnd(start: String?) throws {
        let initial = start.map { [$0] } ?? []
        let longest = try run(initial) { list in (list.count, try Rank.last(after: list.last)) }
        #expect(longest < 50)
    }
}
