@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    @Test func accessRevokedWhileTheRowIsDirty() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice"), bob = try await server.user("bob")
        let a = try Device(server: server, token: alice.token), b = try Device(server: server, token: bob.token)
        try await a.engine.sync()
        let set = try a.store.create("study_sets", ["title": .string("shared")])
        let collaboration = try a.store.create("set_collaborators", ["set_id": .string(set), "user_id": .string(bob.userID)])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set) != nil }
        #expect(try b.store.row("study_sets", id: set)?["title"] == .string("shared"))
        try b.store.update("study_sets", id: set, ["title": .string("bob's edit")])
        try a.store.delete("set_collaborators", id: collaboration)
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set) == nil }
        var events: [SyncEvent] = []
        while let event = await Self.nextEvent(b.engine, within: 1) { events.append(event) }
        #expect(events.contains { if case .rejected(_, let id, 404, _) = $0 { id == set } else { false } }, "\(events)")
        #expect(events.contains(.removed(resource: "study_sets", id: set, revoked: true, discardedEdits: false)), "\(events)")
        #expect(try b.store.row("study_sets", id: set) == nil)
        #expect(try a.store.row("study_sets", id: set)?["title"] == .string("shared"))
    }
}
