@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    /// Sharing by name against a real `ferry serve`: alice types bob's name,
    /// `lookupUser(name:)` finds his id, the share row with it syncs and bob
    /// gets the set; a name nobody has is nil; past the server's ration of
    /// lookups (30 in 10 minutes) the engine throws when to ask again.
    @Test func sharingWithAUserFoundByName() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice"), bob = try await server.user("bob.smith+work@example.com")
        let a = try Device(server: server, token: alice.token), b = try Device(server: server, token: bob.token)
        try await a.engine.sync()

        let found = try #require(try await a.engine.lookupUser(name: "bob.smith+work@example.com"))
        #expect(found == FoundUser(id: bob.userID, name: "bob.smith+work@example.com"))
        #expect(try await a.engine.lookupUser(name: "bob.smith") == nil, "exact match only")
        #expect(try await a.engine.lookupUser(name: "nobody") == nil)

        let set = try a.store.create("study_sets", ["title": .string("shared by name")])
        _ = try a.store.create("set_collaborators", ["set_id": .string(set), "user_id": .string(found.id)])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set) != nil }
        #expect(try b.store.row("study_sets", id: set)?["title"] == .string("shared by name"))

        // Three lookups so far; the ration is 30.
        var answered = 3
        var limited: Date?
        while limited == nil && answered <= 30 {
            do {
                _ = try await a.engine.lookupUser(name: "nobody\(answered)")
                answered += 1
            } catch UserLookupError.rateLimited(let retryAfter) {
                limited = retryAfter ?? .distantPast
            }
        }
        #expect(answered == 30, "the 31st lookup is the first refused")
        let due = try #require(limited)
        #expect(due > Date(), "Retry-After names a time to come: \(due)")
    }
}
