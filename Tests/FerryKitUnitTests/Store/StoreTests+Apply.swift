@testable import FerryKit
import Foundation
import GRDB
import Testing
@testable import FerryKitTestSupport

/// Applying the server's rows without a server: the revision rule, and the
/// base copy that exists only while local edits are pending.
extension StoreTests {
    func serverRow(_ id: String, revision: Int64, title: String, description: String = "d") -> RowData {
        [
            "id": .string(id), "title": .string(title), "description": .string(description), "revision": .int(revision),
            "last_modified": .int(1_000 * revision), "is_deleted": .bool(false),
        ]
    }

    func baseCount(_ store: FerryStore) throws -> Int {
        try store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM ferry_base") ?? -1 }
    }

    @Test func olderOrEqualRevisionsAreIgnoredAndSyncedRowsKeepNoBaseCopy() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 3, title: "three"))], cursor: "c1") { _ in nil }
        _ = try store.applyPage(
            [
                ("study_sets", serverRow("s", revision: 2, title: "two")),
                ("study_sets", serverRow("s", revision: 3, title: "three again")),
            ], cursor: "c2"
        ) { _ in nil }
        #expect(try store.row("study_sets", id: "s")?["title"] == .string("three"))
        #expect(try store.cursor() == "c2")
        #expect(try baseCount(store) == 0, "the local row is the server's version")
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 4, title: "four"))], cursor: nil) { _ in nil }
        #expect(try store.row("study_sets", id: "s")?["title"] == .string("four"))
        #expect(try store.cursor() == "c2", "a page without a cursor (Index) leaves the feed's")
    }

    @Test func theFirstEditKeepsTheServerVersionAsTheBaseOfTheMerge() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 1, title: "T", description: "D"))], cursor: nil) { _ in nil }
        try store.update("study_sets", id: "s", ["title": .string("mine")])
        try store.update("study_sets", id: "s", ["title": .string("mine again")])
        #expect(try baseCount(store) == 1)
        #expect(try store.uploadInput().bases[RowKey(resource: "study_sets", id: "s")] == 1)
        // The server changed the description meanwhile: a merge, not a conflict,
        // because the base says the title is the only local change.
        let events = try store.applyPage(
            [("study_sets", serverRow("s", revision: 2, title: "T", description: "theirs"))],
            cursor: nil
        ) { _ in nil }
        #expect(events.isEmpty)
        #expect(try store.row("study_sets", id: "s")?["title"] == .string("mine again"))
        #expect(try store.row("study_sets", id: "s")?["description"] == .string("theirs"))
        #expect(try store.uploadInput().bases[RowKey(resource: "study_sets", id: "s")] == 2, "re-based on the new server version")
    }

    @Test func anAnswerOlderThanWhatTheFeedBroughtDoesNotTurnTheRowBack() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 1, title: "T", description: "D"))], cursor: nil) { _ in nil }
        try store.update("study_sets", id: "s", ["title": .string("mine")])
        let request = try #require(
            UploadPlanner.plan(
                try store.uploadInput().operations, schema: ExampleSchema.schema,
                rows: try store.uploadInput().rows, bases: try store.uploadInput().bases
            ).first)
        // The edit reached the server (revision 2; the answer was lost), another
        // device changed the description (3), and the feed brought that first.
        _ = try store.applyPage(
            [("study_sets", serverRow("s", revision: 3, title: "mine", description: "theirs"))],
            cursor: nil
        ) { _ in nil }
        // Then the retry's replayed answer: revision 2, as the server stored it.
        try store.acknowledge(request, serverRow: serverRow("s", revision: 2, title: "mine", description: "D"))
        #expect(try store.state("study_sets", id: "s") == .synced)
        #expect(try store.row("study_sets", id: "s")?["description"] == .string("theirs"))
        #expect(try store.row("study_sets", id: "s")?["revision"] == .int(3))
    }

    @Test func aRowMergedWithConflictingFieldsIsInConflictUntilTheMergeIsUploaded() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 1, title: "T", description: "D"))], cursor: nil) { _ in nil }
        try store.update("study_sets", id: "s", ["title": .string("mine")])
        #expect(try store.state("study_sets", id: "s") == .dirty)
        let events = try store.applyPage(
            [("study_sets", serverRow("s", revision: 2, title: "theirs", description: "D"))],
            cursor: nil
        ) { _ in nil }
        #expect(events.count == 1)
        #expect(try store.state("study_sets", id: "s") == .conflict)
        let request = try #require(
            UploadPlanner.plan(
                try store.uploadInput().operations, schema: ExampleSchema.schema,
                rows: try store.uploadInput().rows, bases: try store.uploadInput().bases
            ).first)
        try store.acknowledge(request, serverRow: serverRow("s", revision: 3, title: "mine", description: "D"))
        #expect(try store.state("study_sets", id: "s") == .synced)
    }
}
