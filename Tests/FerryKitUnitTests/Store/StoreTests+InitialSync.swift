@testable import FerryKit
import Foundation
import Testing

/// An initial sync after uploads: rows the store held as synced when it took
/// its cursor must each come back in an Index page, or they are gone.
extension StoreTests {
    @Test func rowsHeldBeforeTheCursorThatNoPageBringsBackAreRemovedWithAnEvent() throws {
        let store = try store()
        // Acknowledged uploads before the first initial sync: synced rows.
        _ = try store.applyPage(
            [
                ("study_sets", serverRow("kept", revision: 1, title: "kept")),
                ("study_sets", serverRow("gone", revision: 1, title: "deleted on the server")),
            ],
            cursor: nil
        ) { _ in nil }
        let pending = try store.create("study_sets", ["title": .string("not uploaded yet")])
        try store.beginInitialSync(cursor: "c0")
        _ = try store.applyIndexPage([("study_sets", serverRow("kept", revision: 2, title: "kept"))], step: "study_sets", next: nil) { _ in nil }
        let events = try store.finishInitialSync()
        #expect(try store.row("study_sets", id: "kept") != nil)
        #expect(try store.row("study_sets", id: "gone") == nil, "no page brought it, no edit is pending: the server does not have it")
        #expect(try store.row("study_sets", id: pending) != nil, "a row with a pending create stays")
        #expect(events == [.removed(resource: "study_sets", id: "gone", revoked: false, discardedEdits: false)])
        #expect(try store.cursor() == "c0")
    }

    @Test func aResourceTheServerWouldNotListRemovesNothing() throws {
        let store = try store()
        _ = try store.applyPage([("study_sets", serverRow("s", revision: 1, title: "T"))], cursor: nil) { _ in nil }
        try store.beginInitialSync(cursor: "c0")
        try store.skipStep(.resource("study_sets"))
        #expect(try store.finishInitialSync().isEmpty)
        #expect(try store.row("study_sets", id: "s") != nil)
    }
}
