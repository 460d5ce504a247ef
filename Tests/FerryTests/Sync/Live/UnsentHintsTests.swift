@testable import Ferry
import Testing

/// What an outbox holds for the other instances until it sends it (``UnsentHints``).
@Suite struct UnsentHintsTests {
    /// What the sender's thread sends of a round: the collected text as it is, then each made
    /// hint's line that it does not hold yet, once.
    @Test func madeHintsFollowTheCollectedTextEachLineOnce() {
        let made = [
            ChangeHint(xid: 9, table: 1, target: .user("a")), ChangeHint(xid: 9, table: 1, target: .scope(table: 2, id: "s")),
            ChangeHint(xid: 9, table: 1, target: .user("a")),
        ]
        func written(_ collected: String, _ made: [ChangeHint]) -> String {
            var hints = UnsentHints()
            hints.add(collected: collected, made: made)
            return hints.written
        }
        #expect(written("9 1 u a\n8 3 *", made) == "9 1 u a\n8 3 *\n9 1 s 2 s\n")
        #expect(written("", made) == "9 1 u a\n9 1 s 2 s\n")
        #expect(written("8 3 *\n", []) == "8 3 *\n")
        // Past the limits, one hint for everyone.
        var many = UnsentHints()
        many.add(collected: "", made: Array(repeating: made[0], count: UnsentHints.madeFoldLimit + 1))
        #expect(many.written == "0 0 *\n")
        #expect(many.count == 1)
        var long = UnsentHints()
        long.add(collected: String(repeating: "9 1 u someone\n", count: UnsentHints.foldLimit / 14 + 1), made: made)
        #expect(long.written == "0 0 *\n")
    }
}
