import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A collaborator removed from a public set they subscribed to keeps the set
/// (issue 46's simulation, seed 1791): the subscription still covers it.
extension SubscriptionIntegrationTests {
    @Test func aRevocationOnTheDefaultStreamKeepsARowASubscriptionStillCovers() async throws {
        // examples/study with public sets: collaborators (the default stream's
        // membership rule) and the stream `set`, as the simulation runs it.
        let (database, _) = try SimulationSchema.studyPublic.database()
        let server = try FerryServer(database: database)
        defer { server.stop() }
        let alice = try await server.user("alice"), bob = try await server.user("bob")
        let teacher = try Phone(server, token: alice.token)
        let phone = try Phone(server, token: bob.token)
        try await teacher.engine.sync()
        // Bob's default stream has a cursor from before the share and its revocation.
        try await phone.engine.sync()

        // A public set shared with Bob, then unshared: his default stream has a revoked entry for it.
        let open = try teacher.store.create("study_sets", ["title": .string("public"), "is_public": .bool(true)])
        let share = try teacher.store.create("set_collaborators", ["set_id": .string(open), "user_id": .string(bob.userID)])
        try await teacher.engine.sync()
        try teacher.store.delete("set_collaborators", id: share)
        // A private set shared after the revocation: Bob holding it shows his default stream passed the revocation.
        let later = try teacher.store.create("study_sets", ["title": .string("later")])
        _ = try teacher.store.create("set_collaborators", ["set_id": .string(later), "user_id": .string(bob.userID)])
        try await teacher.engine.sync()
        #expect(try teacher.store.pendingCount() == 0)

        // Subscribed now: the queue downloads the stream from the start (after the
        // revocation, so without it), then the default stream sends the revoked entry.
        let sub = try await phone.engine.subscribe(stream: "set", id: open)
        try await phone.sync { try phone.store.row("study_sets", id: later) != nil && sub.state() == .synced }
        #expect(try phone.store.row("study_sets", id: open) != nil, "the subscription still covers the public set")
        // And it stays: later rounds do not take it away.
        try await phone.engine.sync()
        #expect(try phone.store.row("study_sets", id: open) != nil)
        #expect(try sub.state() == .synced)
    }
}
