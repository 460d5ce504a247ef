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

extension SyncIntegrationTests {
    /// Found by the soak (seed 4536): a new device's first sync uploads before
    /// its initial sync takes the feed's cursor. The set's create had lost its
    /// answer, then the set was deleted locally and its term edited: the
    /// upload creates the term, deletes the set, and the server deletes the
    /// term with it, all before the cursor. The Index no longer lists the
    /// term, and the feed from the cursor never mentions it: without a check,
    /// the device keeps a term the server deleted.
    @Test func aTermDeletedWithItsSetBeforeTheFirstInitialSyncDoesNotOutliveIt() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let a = try Device(server: server, token: alice.token)
        try await a.engine.refreshSchema()
        let set = try a.store.create("study_sets", ["title": .string("created, answer lost")])
        let term = try a.store.create(
            "terms",
            [
                "set_id": .string(set), "word": .string("w"),
                "rank": .string(try a.store.rankAtEnd("terms", scope: .string(set))),
            ])
        a.transport.inject(.dropResponse) { $0.method == "POST" && $0.path == "/v1/study_sets" }
        await #expect(throws: TransportFailure.self) { try await a.engine.sync() }
        try a.store.delete("study_sets", id: set)
        try a.store.update("terms", id: term, ["word": .string("edited after")])
        try await a.engine.sync()
        #expect(try a.store.pendingCount() == 0)
        #expect(try a.store.row("study_sets", id: set) == nil)
        #expect(try a.store.row("terms", id: term) == nil, "the server deleted the term with its set")
    }
}
