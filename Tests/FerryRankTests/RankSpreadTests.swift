import FerryRank
import Testing

@Suite struct RankSpreadTests {
    @Test(
        arguments: [
            (0, nil, nil), (1, nil, nil), (61, nil, nil), (1000, nil, nil), (10, "V", "W"),
            (100, "a", nil), (100, nil, "01"), (50, "V", "V1"), (5, "zzzz", nil),
        ] as [(Int, String?, String?)])
    func keysAreIncreasingAndInBounds(n: Int, a: String?, b: String?) throws {
        let keys = try Rank.spread(n, between: a, and: b)
        #expect(keys.count == n)
        #expect(strictlyIncreasing(keys))
        for key in keys { try Rank.validate(key) }
        if let a, let first = keys.first { #expect(bytewiseLess(a, first)) }
        if let b, let last = keys.last { #expect(bytewiseLess(last, b)) }
    }

    @Test func keysAreShortAndEven() throws {
        let keys = try Rank.spread(61, between: nil, and: nil)
        #expect(keys.allSatisfy { $0.utf8.count == 1 })
        let many = try Rank.spread(10_000, between: nil, and: nil)
        #expect(many.map(\.utf8.count).max()! <= 4)
    }

    @Test func badArgumentsAreRejected() {
        #expect(throws: RankError.self) { try Rank.spread(-1, between: nil, and: nil) }
        #expect(throws: RankError.self) { try Rank.spread(Rank.maxSpreadCount + 1, between: nil, and: nil) }
        #expect(throws: RankError.self) { try Rank.spread(3, between: "W", and: "V") }
        #expect(throws: RankError.self) { try Rank.spread(3, between: "V0", and: nil) }
    }
}
