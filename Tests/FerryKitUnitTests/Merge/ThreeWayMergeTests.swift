import FerryKit
import Testing

@Suite struct ThreeWayMergeTests {
    let base: RowData = ["id": .string("1"), "title": .string("T"), "description": .string("D"), "revision": .int(1)]

    @Test func eachSideKeepsTheFieldsOnlyItChanged() {
        let local = base.merging(["title": .string("mine")]) { $1 }
        let remote = base.merging(["description": .string("theirs"), "revision": .int(2)]) { $1 }
        let (row, conflicts) = ThreeWayMerge.merge(base: base, local: local, remote: remote, dirty: ["title"])
        #expect(row["title"] == .string("mine"))
        #expect(row["description"] == .string("theirs"))
        #expect(row["revision"] == .int(2))
        #expect(conflicts.isEmpty)
    }

    @Test func theSameFieldChangedOnBothSidesIsAConflictThatLocalWinsByDefault() {
        let local = base.merging(["title": .string("mine")]) { $1 }
        let remote = base.merging(["title": .string("theirs"), "revision": .int(2)]) { $1 }
        let (row, conflicts) = ThreeWayMerge.merge(base: base, local: local, remote: remote, dirty: ["title"])
        #expect(row["title"] == .string("mine"))
        #expect(conflicts == [.init(field: "title", base: .string("T"), local: .string("mine"), remote: .string("theirs"))])
        let (custom, _) = ThreeWayMerge.merge(base: base, local: local, remote: remote, dirty: ["title"]) { $0.remote }
        #expect(custom["title"] == .string("theirs"))
    }

    @Test func anEqualChangeOnBothSidesIsNoConflictAndMergingIsIdempotent() {
        let local = base.merging(["title": .string("same")]) { $1 }
        let remote = base.merging(["title": .string("same"), "revision": .int(2)]) { $1 }
        let first = ThreeWayMerge.merge(base: base, local: local, remote: remote, dirty: ["title"])
        #expect(first.conflicts.isEmpty)
        let second = ThreeWayMerge.merge(base: remote, local: first.row, remote: remote, dirty: ["title"])
        #expect(second.row == first.row)
    }

    @Test func withoutLocalEditsTheRemoteRowWins() {
        let remote = base.merging(["title": .string("theirs"), "revision": .int(2)]) { $1 }
        #expect(ThreeWayMerge.merge(base: base, local: base, remote: remote, dirty: []).row == remote)
    }
}
