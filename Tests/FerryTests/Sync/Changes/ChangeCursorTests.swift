@testable import Ferry
import Testing

/// The cursor's wire form, without a database.
@Suite struct ChangeCursorTests {
    @Test func roundTrips() throws {
        let cursors = [
            ChangeCursor.start, ChangeCursor(afterXID: 1), ChangeCursor(afterXID: 123_456_789_012),
            ChangeCursor(afterXID: 42, position: ("terms", "0b8a4a52-8a3b-4d5e-9a1f-0123456789ab")),
            ChangeCursor(afterXID: 7, position: ("ünïcode", "x")),
            ChangeCursor(afterXID: 42, position: ("terms", "x"), base: 9_000),
        ]
        for cursor in cursors {
            let token = cursor.token
            #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            #expect(ChangeCursor(token: token) == cursor, "\(token)")
        }
        #expect(ChangeCursor(token: ChangeCursor.start.token)?.isStart == true)
    }

    @Test func rejectsEverythingElse() throws {
        let good = ChangeCursor(afterXID: 42, position: ("terms", "abc")).token
        let bad0 = [
            "", "1", "2" + good.dropFirst(), "1AAAA", good + "A", good + "=", String(good.dropLast()),
            "1AAAAAAAAAAAC", "not a cursor", good.replacingOccurrences(of: "1", with: "!"),
            String(repeating: "1", count: 5000),
        ]
        // 9 bytes encode to 12 characters; a 13th would carry leftover bits, and
        // "1" + 12 chars with non-zero padding bits in a short tail is not canonical.
        let extra = [ChangeCursor(afterXID: 5).token + "B", "1AAAAAAAAAAAB"]
        for token in bad0 + extra where token != good {
            #expect(ChangeCursor(token: token) == nil, "\(token.prefix(40))")
        }
    }

    /// A position's base: kind 2, never a zero base, never on a frontier.
    @Test func aBaseIsCarriedByAPositionOnly() throws {
        #expect(ChangeCursor(afterXID: 5, base: 9).base == 0)
        let plain = ChangeCursor(afterXID: 42, position: ("terms", "abc"))
        let based = ChangeCursor(afterXID: 42, position: ("terms", "abc"), base: 77)
        #expect(plain != based && plain.token != based.token)
        #expect(ChangeCursor(token: based.token)?.base == 77)
        // Kind 2 with a zero base is kind 1 spelled another way.
        var bytes: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 42, 2] + [UInt8](repeating: 0, count: 8)
        bytes += [5] + Array("terms".utf8) + [0, 3] + Array("abc".utf8)
        #expect(ChangeCursor(token: "1" + Base64URL.encode(bytes)) == nil)
        // A download from the start takes its first page's frontier as its base; its later pages keep it.
        let first = plain.continuing(from: .start, frontier: 500)
        #expect(first.base == 500)
        #expect(ChangeCursor(afterXID: 60, position: ("terms", "d")).continuing(from: first, frontier: 900).base == 500)
        #expect(plain.continuing(from: ChangeCursor(afterXID: 30), frontier: 900).base == 0)
    }
}
