@testable import FerryKit
import Foundation
import Testing

/// What a server row does to the local one, decided from values alone: no database.
@Suite("Remote decision")
struct RemoteDecisionTests {
    static func row(_ revision: Int64, title: String = "T", description: String = "D") -> RowData {
        [
            "id": .string("s"), "title": .string(title), "description": .string(description), "revision": .int(revision),
            "last_modified": .int(revision), "is_deleted": .bool(false),
        ]
    }

    static func tombstone(_ revision: Int64?, revoked: Bool = false) -> RowData {
        var row: RowData = ["id": .string("s"), "is_deleted": .bool(true)]
        if let revision { row["revision"] = .int(revision) }
        if revoked { row["revoked"] = .bool(true) }
        return row
    }

    static func decide(_ remote: RowData, _ local: RemoteDecision.Local, resolver: ThreeWayMerge.Resolver? = nil) -> RemoteDecision {
        RemoteDecision.decide(resource: "study_sets", id: "s", remote: remote, local: local, resolver: resolver)
    }

    @Test func aLiveRowMeetingNoLocalEditsIsAppliedWithoutReadingAnythingMore() {
        #expect(RemoteDecision.needs(Self.row(3), pending: false).isEmpty)
        #expect(Self.decide(Self.row(3), .init(pending: false)) == .apply)
    }

    @Test func aRowWithoutARevisionIsNotARow() {
        var row = Self.row(1)
        row["revision"] = nil
        #expect(Self.decide(row, .init(pending: true, base: (1, Self.row(1)), row: Self.row(1))) == .ignore)
        #expect(Self.decide(row, .init(pending: false)) == .ignore)
    }

    @Test func anOlderOrEqualRevisionThanTheBaseIsIgnored() {
        let local = RemoteDecision.Local(pending: true, base: (3, Self.row(3)), row: Self.row(3, title: "mine"), dirty: ["title"])
        #expect(RemoteDecision.needs(Self.row(3), pending: true) == [.base, .row, .dirty])
        #expect(Self.decide(Self.row(2), local) == .ignore)
        #expect(Self.decide(Self.row(3), local) == .ignore)
    }

    @Test func editsOfOtherFieldsMergeAndTheSameFieldIsAConflictLocalWinningByDefault() {
        let local = RemoteDecision.Local(pending: true, base: (1, Self.row(1)), row: Self.row(1, title: "mine"), dirty: ["title"])
        var merged = Self.row(2, description: "theirs")
        merged["title"] = .string("mine")
        #expect(Self.decide(Self.row(2, description: "theirs"), local) == .merge(merged))

        var conflicted = Self.row(2, title: "theirs")
        conflicted["title"] = .string("mine")
        let conflict = ThreeWayMerge.Conflict(field: "title", base: .string("T"), local: .string("mine"), remote: .string("theirs"))
        #expect(Self.decide(Self.row(2, title: "theirs"), local) == .conflict(conflicted, [conflict]))

        var resolved = Self.row(2, title: "theirs")
        resolved["title"] = .string("both")
        #expect(Self.decide(Self.row(2, title: "theirs"), local, resolver: { _ in .string("both") }) == .conflict(resolved, [conflict]))
    }

    @Test func aRowDeletedHereWhoseDeleteWaitsOnlyTakesTheNewBase() {
        let local = RemoteDecision.Local(pending: true, base: (1, Self.row(1)), row: nil, dirty: [])
        #expect(Self.decide(Self.row(2), local) == .keep)
    }

    @Test func aTombstoneRemovesTheRowAndRejectsItsEditsWithTheLocalVersion() {
        #expect(RemoteDecision.needs(Self.tombstone(4), pending: false) == [.base, .row])
        let mine = Self.row(1, title: "mine")
        guard case .remove(let removal) = Self.decide(Self.tombstone(4), .init(pending: true, base: (1, Self.row(1)), row: mine)) else {
            Issue.record("not a removal")
            return
        }
        #expect(!removal.revoked)
        #expect((try? JSONValue.decode(removal.problem ?? Data()))?.object?["code"] == .string("gone"))
        #expect(removal.event == .removed(resource: "study_sets", id: "s", revoked: false, discardedEdits: true, localVersion: mine))
    }

    @Test func aTombstoneOfARowWithoutEditsTellsTheAppOnlyIfTheStoreHadIt() {
        let had = Self.decide(Self.tombstone(4), .init(pending: false, base: (3, Self.row(3)), row: Self.row(3)))
        #expect(
            had
                == .remove(
                    .init(
                        revoked: false, problem: nil,
                        event: .removed(resource: "study_sets", id: "s", revoked: false, discardedEdits: false))))
        #expect(Self.decide(Self.tombstone(4), .init(pending: false)) == .remove(.init(revoked: false, problem: nil, event: nil)))
    }

    @Test func aTombstoneNotNewerThanTheBaseIsIgnoredButARevocationNeverIs() {
        let local = RemoteDecision.Local(pending: false, base: (5, Self.row(5)), row: Self.row(5))
        #expect(Self.decide(Self.tombstone(5), local) == .ignore)
        #expect(RemoteDecision.needs(Self.tombstone(nil, revoked: true), pending: false) == [.row])
        guard case .remove(let removal) = Self.decide(Self.tombstone(nil, revoked: true), local) else {
            Issue.record("a revocation must remove the row")
            return
        }
        #expect(removal.revoked && removal.event == .removed(resource: "study_sets", id: "s", revoked: true, discardedEdits: false))
    }
}
