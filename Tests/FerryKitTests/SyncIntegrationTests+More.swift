@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

extension SyncIntegrationTests {
    @Test func aReorderOnTwoDevicesEndsInTheSameOrderOnBoth() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("order")])
        var ids: [String: String] = [:]
        for word in ["a", "b", "c", "d"] {
            ids[word] = try a.store.create("terms", ["set_id": .string(set), "word": .string(word),
                                                     "rank": .string(try a.store.rankAtEnd("terms", scope: .string(set)))])
        }
        let words = { (device: Device) in try device.store.rows("terms", where: "set_id", equals: .string(set)).compactMap { $0["word"]?.string } }
        try await a.engine.sync()
        try await b.sync { try words(b).count == 4 }
        try a.store.move("terms", id: ids["d"]!, after: nil)        // d first
        try b.store.move("terms", id: ids["a"]!, after: ids["c"]!)  // a after c
        try await a.engine.sync()
        try await b.sync { try words(b) == ["d", "b", "c", "a"] }
        try await a.sync { try words(a) == ["d", "b", "c", "a"] }
        #expect(try words(b) == words(a))
    }

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

    /// The process dies after the server applied an upload and before the store
    /// recorded the answer; the store is opened again from its file.
    @Test func aClientKilledMidSyncResumesWithNothingLostOrAppliedTwice() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-crash-\(UUID()).sqlite").path
        defer { _ = try? FerryStore.signOut(path: path, discardingUnsynced: true) }
        let set: String
        do {
            let store = try FerryStore(path: path)
            let transport = FaultyTransport(URLSessionTransport(baseURL: server.baseURL))
            let engine = SyncEngine(store: store, transport: transport, token: alice.token)
            try await engine.sync()
            set = try store.create("study_sets", ["title": .string("written once")])
            try store.create("terms", ["set_id": .string(set), "word": .string("t"), "rank": .string("U")])
            transport.inject(.dropResponse) { $0.method == "POST" && $0.path == "/v1/terms" }
            await #expect(throws: TransportFailure.self) { try await engine.sync() }
            #expect(try store.state("terms", id: try #require(store.rows("terms").first?["id"]?.string)) == .dirty)
        }
        let reopened = try FerryStore(path: path)
        #expect(try reopened.pendingCount() == 1, "the set was acknowledged; the term's answer was lost")
        let engine = SyncEngine(store: reopened, transport: URLSessionTransport(baseURL: server.baseURL), token: alice.token)
        try await engine.sync()
        #expect(try reopened.pendingCount() == 0)
        let other = try Device(server: server, token: alice.token)
        #expect(try await other.serverRows("terms", "set_id", set, token: alice.token).count == 1, "one term on the server")
        try await other.sync { try !other.store.rows("terms").isEmpty }
        #expect(try other.store.rows("terms", where: "set_id", equals: .string(set)).count == 1)
        #expect(try other.store.rows("study_sets").count == 1)
    }
}

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
        let reason = (try? JSONValue.decode(problem))?.object?["errors"].flatMap { if case .array(let e) = $0 { e.first?.object?["reason"] } else { nil } }
        #expect(reason == .string("parent_deleted"))
        #expect(try a.store.rows("folder_sets").isEmpty, "rolled back")
        #expect(try a.store.rejectedCount() == 1)
    }
}

extension SyncIntegrationTests {
    /// The steady state: a sync with nothing to upload or download is one
    /// conditional request answered 304 with no body.
    @Test func aSyncWithNothingToDoIsOne304() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let id = try a.store.create("study_sets", ["title": .string("s")])
        try await a.engine.sync()
        // Until the feed has passed the device's own write (it waits for the
        // cluster's other transactions), a sync may still download it: wait
        // until another device of the user has it from the feed, then until a's
        // own syncs are quiet.
        try await b.sync { try b.store.row("study_sets", id: id) != nil }
        var before = a.transport.delivered.count
        try await a.sync {
            let quiet = a.transport.answers[before...].map(\.status) == [304]
            before = a.transport.delivered.count
            return quiet
        }
        try await a.engine.sync()
        let requests = a.transport.delivered[before...], answers = a.transport.answers[before...]
        #expect(requests.count == 1, "\(requests.map { "\($0.method) \($0.path)" })")
        #expect(requests.first?.headers["If-None-Match"] != nil)
        #expect(answers.first?.status == 304)
        #expect(answers.first?.body.isEmpty == true)
        print("ferrykit: steady-state sync: \(requests.count) request, \(answers.first?.status ?? 0), \(answers.first?.body.count ?? -1) body bytes")
    }
}
