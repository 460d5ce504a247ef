import FerryRank
import Testing

@Suite struct RankEdgeCaseTests {
    /// Generates between `a` and `b` and checks the result really lies strictly between.
    private func checkedBetween(_ a: String?, _ b: String?) throws -> String {
        let key = try Rank.between(a, b)
        try Rank.validate(key)
        if let a { #expect(bytewiseLess(a, key), "\(a) < \(key)") }
        if let b { #expect(bytewiseLess(key, b), "\(key) < \(b)") }
        return key
    }

    @Test func alphabetIsInByteOrder() {
        #expect(Rank.alphabet.utf8.count == 62)
        #expect(strictlyIncreasing(Rank.alphabet.map { String($0) }))
    }

    @Test func emptyListGetsTheMiddleKey() throws {
        #expect(try Rank.between(nil, nil) == "V")
        #expect(try Rank.first(before: nil) == "V")
        #expect(try Rank.last(after: nil) == "V")
    }

    @Test func frontAndEndConveniences() throws {
        #expect(try Rank.first(before: "V") == "U")
        #expect(try Rank.last(after: "V") == "W")
        #expect(try Rank.last(after: "z") == "z1")
        #expect(try Rank.last(after: "zzz") == "zzz1")
    }

    @Test func belowTheSmallestOneDigitKey() throws {
        #expect(try checkedBetween(nil, "1") == "0z")
        #expect(try checkedBetween(nil, "0001") == "0000z")
        _ = try checkedBetween(nil, "01")
    }

    @Test func adjacentDigits() throws {
        for (a, b) in [("a", "b"), ("0z", "1"), ("9", "A"), ("Z", "a"), ("y", "z"), ("V1", "V2")] {
            let key = try checkedBetween(a, b)
            #expect(key.utf8.count == a.utf8.count + 1)
        }
    }

    @Test func prefixes() throws {
        _ = try checkedBetween("V", "V1")
        _ = try checkedBetween("V", "V01")
        _ = try checkedBetween("V", "V0001")
        _ = try checkedBetween("V0001", "V001")
        _ = try checkedBetween("Vz", "W")
        _ = try checkedBetween("Vzzz", "W")
        _ = try checkedBetween("Vzzz", "W0001")
        #expect(try checkedBetween("V", "W5") == "W")
    }

    @Test func wideGapsGiveOneCharacter() throws {
        #expect(try checkedBetween("1", "z").utf8.count == 1)
        #expect(try checkedBetween("V", nil).utf8.count == 1)
        #expect(try checkedBetween(nil, "V").utf8.count == 1)
    }

    @Test func misorderedBoundsAreRejected() {
        for (a, b) in [("V", "V"), ("W", "V"), ("V1", "V"), ("z", "1")] {
            #expect(throws: RankError.self) { try Rank.between(a, b) }
        }
    }

    @Test(arguments: ["", "V-", "a b", "é", "V\u{0}", "0", "00", "V0", "a1b0", String(repeating: "a", count: 129)])
    func invalidKeysAreRejected(key: String) throws {
        let error = try #require(throws: RankError.self) { try Rank.validate(key) }
        #expect(!error.reason.isEmpty)
        #expect(throws: RankError.self) { try Rank.between(key, nil) }
        #expect(throws: RankError.self) { try Rank.between(nil, key) }
    }

    @Test func errorReasonsSayWhatIsWrong() {
        func reason(_ key: String) -> String {
            do { try Rank.validate(key); return "" } catch { return error.reason }
        }
        #expect(reason("").contains("empty"))
        #expect(reason("V0").contains("end in"))
        #expect(reason("V!").contains("0-9, A-Z and a-z"))
        #expect(reason(String(repeating: "V", count: 200)).contains("128"))
    }

    @Test func validKeysAreAccepted() throws {
        for key in ["1", "z", "0z", "V", "00001", Rank.alphabet.dropFirst().description, String(repeating: "z", count: 128)] {
            try Rank.validate(key)
        }
    }

    @Test func lengthLimit() throws {
        let long = String(repeating: "V", count: 127)
        _ = try checkedBetween(long, long.dropLast() + "W")
        _ = try checkedBetween(long, nil)
        // A full-length lower bound with no room at its length cannot be followed.
        let full = String(repeating: "V", count: 127) + "1"
        #expect(throws: RankError.self) { try Rank.between(full, String(repeating: "V", count: 127) + "2") }
        // The same holds below a full-length upper bound with no room at its length.
        #expect(throws: RankError.self) { try Rank.between(nil, String(repeating: "0", count: 127) + "1") }
        _ = try checkedBetween(nil, String(repeating: "0", count: 126) + "1")
        _ = try checkedBetween(nil, full)
    }
}
