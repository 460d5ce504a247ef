@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    /// Kozlov's lists: a link added offline that the server refuses for good
    /// (the set was deleted meanwhile) disappears from the list, and the app is told.
    @Test func aPermanentlyFailedAddRollsBackLocallyAndTellsTheApp() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let folder = try a.store.create("folders", ["name": .string("f")])
        let set = try a.store.create("study_sets", ["title": .string("s")])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set) != nil }
        try b.store.delete("study_sets", id: set)
        try await b.engine.sync()
        let link = try a.store.create("folder_sets", ["folder_id": .string(folder), "set_id": .string(set)])
        #expect(try a.store.rows("folder_sets").count == 1, "the add shows at once")
        try await a.engine.sync()
        let event = await Self.nextEvent(a.engine)
        guard case .rejected(let resource, let id, 422, let problem)? = event else {
            Issue.record("expected a rejection, got \(String(describing: event))")
            return
        }
        #expect(resource == "folder_sets" && id == link)
        let reason = (try? JSONValue.decode(problem))?.object?["errors"].flatMap {
            if case .array(let e) = $0 { e.first?.object?["reason"] } else { nil }
        }
        #expect(reason == .string("parent_deleted"))
        #expect(try a.store.rows("folder_sets").isEmpty, "rolled back")
        #expect(try a.store.rejectedCount() == 1)
    }
}
