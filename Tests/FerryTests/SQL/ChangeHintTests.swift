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

    /// A collected text's lines: by bytes, the empty ones left out, the last one without its newline kept.
    @Test func aTextIsSplitIntoItsNonEmptyLines() {
        #expect(ChangeHint.lines("") == [])
        #expect(ChangeHint.lines("\n\n") == [])
        #expect(ChangeHint.lines("9 1 *") == ["9 1 *"])
        #expect(ChangeHint.lines("9 1 *\n\n8 2 u a b\n") == ["9 1 *", "8 2 u a b"])
        #expect(ChangeHint.lines("\n7 3 *\n6 4 *") == ["7 3 *", "6 4 *"])
        // Any bytes between newlines: a line is never split at a multi-byte character.
        #expect(ChangeHint.lines("é\nü ß\n") == ["é", "ü ß"])
    }

    /// Core 0026: an instance's batch of hints, `@<instance>` and one a line.
    @Test func anInstancesBatchIsReadLineByLineAndItsOwnIsSkipped() {
        let batch = "@a1\n812 16384 u someone\n9 16390 s 16384 0b7a\nnonsense"
        #expect(
            ChangeHint.hints(inPayload: batch, own: "b2") == [
                ChangeHint(xid: 812, table: 16384, target: .user("someone")),
                ChangeHint(xid: 9, table: 16390, target: .scope(table: 16384, id: "0b7a")),
                // A line this server does not read wakes everyone: never a wake too few.
                ChangeHint.everyone,
            ])
        #expect(ChangeHint.hints(inPayload: batch, own: "a1").isEmpty)
        // A trigger's own payload (a write made outside Ferry) is one hint, as before.
        #expect(ChangeHint.hints(inPayload: "9 16390 *", own: "a1") == [ChangeHint(xid: 9, table: 16390, target: .everyone)])
        #expect(ChangeHint.hints(inPayload: "garbage", own: "a1") == [ChangeHint.everyone])
    }

    /// What the outbox sends of the hints Ferry made: each form written as the trigger writes it, and read back the same.
    @Test func eachFormIsWrittenAsTheTriggerWritesIt() {
        let hints = [
            ChangeHint(xid: 812, table: 16390, target: .scope(table: 16384, id: "0b7a3c52")),
            ChangeHint(xid: 812, table: 16384, target: .user("0b7a3c52-5c1e-4c4e-9a57-3f1de1b0c001")),
            ChangeHint(xid: 9, table: 16390, target: .everyone),
            ChangeHint(xid: 9, table: 1, target: .scope(table: 2, id: "a b  c")),
        ]
        #expect(
            hints.map(\.line) == ["812 16390 s 16384 0b7a3c52", "812 16384 u 0b7a3c52-5c1e-4c4e-9a57-3f1de1b0c001", "9 16390 *", "9 1 s 2 a b  c"])
        #expect(hints.map { ChangeHint(payload: $0.line) } == hints)
        #expect(ChangeHint.everyone.line == "0 0 *")
    }
}
