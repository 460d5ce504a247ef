@testable import Ferry
import Testing

/// The NOTIFY payloads of migration 0017, read as hints.
@Suite struct ChangeHintTests {
    @Test func eachFormIsRead() {
        #expect(
            ChangeHint(payload: "812 16384 u 0b7a3c52-5c1e-4c4e-9a57-3f1de1b0c001")
                == ChangeHint(xid: 812, table: 16384, target: .user("0b7a3c52-5c1e-4c4e-9a57-3f1de1b0c001")))
        #expect(ChangeHint(payload: "812 16390 s 16384 0b7a3c52") == ChangeHint(xid: 812, table: 16390, target: .scope(table: 16384, id: "0b7a3c52")))
        #expect(ChangeHint(payload: "9 16390 *") == ChangeHint(xid: 9, table: 16390, target: .everyone))
        #expect(ChangeHint(payload: "9 0 u someone") == ChangeHint(xid: 9, table: 0, target: .user("someone")))
        // A text id may hold spaces: the rest of the payload is the id.
        #expect(ChangeHint(payload: "9 1 s 2 a b  c") == ChangeHint(xid: 9, table: 1, target: .scope(table: 2, id: "a b  c")))
    }

    @Test func anythingElseIsNotAHint() {
        for payload in [
            "", "9", "9 1", "x 1 *", "9 x *", "9 1 * more", "9 1 u", "9 1 u ", "9 1 s 2", "9 1 s x id",
            "9 1 s 2 ", "9 1 q z", "-1 1 *", "9 99999999999 *",
        ] {
            #expect(ChangeHint(payload: payload) == nil, "\(payload)")
        }
    }
}
