@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    /// The create reached the server but its answer did not; then the user
    /// deleted the row. Sending nothing would leave the row on the server, and
    /// the feed would bring it back to this device: the delete must be sent.
    @Test func aCreateWhoseAnswerWasLostThenDeletedLocallyIsDeletedOnTheServer() async throws {
        let (server, alice, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("created, answer lost")])
        a.transport.inject(.dropResponse) { $0.method == "POST" && $0.path == "/v1/study_sets" }
        await #expect(throws: TransportFailure.self) { try await a.engine.sync() }
        try a.store.delete("study_sets", id: set)
        try await a.engine.sync()
        #expect(a.transport.delivered.contains { $0.method == "DELETE" && $0.path == "/v1/study_sets/\(set)" })
        #expect(try a.store.pendingCount() == 0 && a.store.rejectedCount() == 0)
        #expect(try await b.serverRows("study_sets", "id", set, token: alice.token).isEmpty, "deleted on the server")
        // And the feed does not bring it back.
        try await a.engine.sync()
        #expect(try a.store.row("study_sets", id: set) == nil)
    }

    /// The same, when the create never arrived: the DELETE meets 404, and that
    /// is the outcome the user wanted, not a rejection.
    @Test func aCreateThatNeverArrivedThenDeletedLocallyEndsQuietly() async throws {
        let (server, _, a, _) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("never arrived")])
        a.transport.inject(.dropRequest) { $0.method == "POST" && $0.path == "/v1/study_sets" }
        await #expect(throws: TransportFailure.self) { try await a.engine.sync() }
        try a.store.delete("study_sets", id: set)
        try await a.engine.sync()
        #expect(try a.store.pendingCount() == 0 && a.store.rejectedCount() == 0)
        #expect(await Self.nextEvent(a.engine, within: 0.5) == nil, "nothing to tell the app")
    }
}
