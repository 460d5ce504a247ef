@testable import FerryKit
import Foundation
import GRDB
import Testing
@testable import FerryKitTestSupport

/// An upload's answer that arrives after the feed removed its row: the
/// removal stands (issue 51). The order, without a server: the upload is
/// sent, the feed's revocation (or tombstone) is applied, then the upload's
/// 200 is acknowledged.
extension StoreTests {
    /// The upload request of the one pending edit, marked sent as the engine does.
    private func sentRequest(_ store: FerryStore) throws -> UploadRequest {
        let input = try store.uploadInput()
        let request = try #require(UploadPlanner.plan(input.operations, schema: ExampleSchema.schema, rows: input.rows, bases: input.bases).first)
        try store.transition(request.opIDs, .sent)
        return request
    }

    @Test func anAnswerAfterTheFeedRevokedTheRowDoesNotBringItBack() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 1, title: "T"))], cursor: nil) { _ in nil }
        try store.update("study_sets", id: "s", ["title": .string("mine")])
        let request = try sentRequest(store)
        // The revocation raced the upload: the server took the edit (revision 2)
        // and then listed the row as revoked, and the feed brought that first.
        let stub: RowData = ["id": .string("s"), "is_deleted": .bool(true), "revoked": .bool(true)]
        let events = try store.applyPage([("study_sets", stub)], cursor: "c1") { _ in nil }
        #expect(events.count == 1)
        #expect(try store.row("study_sets", id: "s") == nil)
        try store.acknowledge(request, serverRow: serverRow("s", revision: 2, title: "mine"))
        #expect(try store.row("study_sets", id: "s") == nil, "the answer must not restore a row the feed revoked")
        #expect(try baseCount(store) == 0)
    }

    @Test func anAnswerAfterTheFeedDeletedTheRowDoesNotBringItBack() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 1, title: "T"))], cursor: nil) { _ in nil }
        try store.update("study_sets", id: "s", ["title": .string("mine")])
        let request = try sentRequest(store)
        // The edit made revision 2, another device deleted the row (3), and the feed brought the tombstone first.
        var tombstone = serverRow("s", revision: 3, title: "mine")
        tombstone["is_deleted"] = .bool(true)
        _ = try store.applyPage([("study_sets", tombstone)], cursor: "c1") { _ in nil }
        try store.acknowledge(request, serverRow: serverRow("s", revision: 2, title: "mine"))
        #expect(try store.row("study_sets", id: "s") == nil)
    }

    @Test func anAnswerForARowStillThereIsAppliedAsBefore() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 1, title: "T"))], cursor: nil) { _ in nil }
        try store.update("study_sets", id: "s", ["title": .string("mine")])
        let request = try sentRequest(store)
        try store.acknowledge(request, serverRow: serverRow("s", revision: 2, title: "mine"))
        #expect(try store.row("study_sets", id: "s")?["revision"] == .int(2))
        #expect(try store.state("study_sets", id: "s") == .synced)
    }
}
