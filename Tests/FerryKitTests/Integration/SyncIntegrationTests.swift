import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// FerryKit against a real `ferry serve`, real PostgreSQL and memcached, over
/// real sockets; faults come only from the device's ``FaultyTransport``.
@Suite(.serialized) struct SyncIntegrationTests {
    /// A server, a user, and two of that user's devices, the first synced once
    /// (so the store has the schema).
    static func twoDevices() async throws -> (FerryServer, (token: String, userID: String), Device, Device) {
        let server = try FerryServer()
        do {
            let alice = try await server.user("alice")
            let a = try Device(server: server, token: alice.token), b = try Device(server: server, token: alice.token)
            try await a.engine.sync()
            return (server, alice, a, b)
        } catch {
            server.stop()
            throw error
        }
    }

    /// The next event within `seconds`, or nil.
    static func nextEvent(_ engine: SyncEngine, within seconds: Double = 5) async -> SyncEvent? {
        await withTaskGroup(of: SyncEvent?.self) { group in
            group.addTask {
                var iterator = engine.events.makeAsyncIterator(); return await iterator.next()
            }
            // Not a wait: the deadline of a race the event wins as soon as it comes.
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds)); return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test func twoDevicesEditDifferentFieldsOfOneRowOfflineAndBothEditsSurvive() async throws {
        let server = try FerryServer()
        defer { server.stop() }
        let alice = try await server.user("alice")
        let a = try Device(server: server, token: alice.token), b = try Device(server: server, token: alice.token)
        let set = try await { () async throws -> String in
            try await a.engine.sync()
            let id = try a.store.create("study_sets", ["title": .string("T"), "description": .string("D")])
            try await a.engine.sync()
            try await b.sync { try b.store.row("study_sets", id: id) != nil }
            return id
        }()
        #expect(try b.store.row("study_sets", id: set)?["title"] == .string("T"))
        try a.store.update("study_sets", id: set, ["title": .string("title from A")])
        try b.store.update("study_sets", id: set, ["description": .string("description from B")])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set)?["title"] == .string("title from A") }
        try await a.sync { try a.store.row("study_sets", id: set)?["description"] == .string("description from B") }
        for device in [a, b] {
            let row = try #require(try device.store.row("study_sets", id: set))
            #expect(row["title"] == .string("title from A"))
            #expect(row["description"] == .string("description from B"))
            #expect(try device.store.pendingCount() == 0)
            #expect(try device.store.state("study_sets", id: set) == .synced)
        }
    }

    @Test func theSameFieldOnBothIsResolvedByThePolicyWithAnEvent() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("T")])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set) != nil }
        try a.store.update("study_sets", id: set, ["title": .string("from A")])
        try b.store.update("study_sets", id: set, ["title": .string("from B")])
        try await a.engine.sync()
        try await b.engine.sync()  // 409 on title: merged (local wins), sent again
        let event = await Self.nextEvent(b.engine)
        guard case .conflict(let resource, let id, let conflicts)? = event else {
            Issue.record("expected a conflict event, got \(String(describing: event))")
            return
        }
        #expect(resource == "study_sets" && id == set)
        #expect(conflicts.map(\.field) == ["title"])
        #expect(conflicts.first?.remote == .string("from A"))
        try await a.sync { try a.store.row("study_sets", id: set)?["title"] == .string("from B") }
        #expect(try b.store.row("study_sets", id: set)?["title"] == .string("from B"))
        #expect(try b.store.pendingCount() == 0)
    }

    @Test func aDeleteAgainstAnEditRemovesTheRowAndRejectsTheEditVisibly() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("T")])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set) != nil }
        try a.store.delete("study_sets", id: set)
        try b.store.update("study_sets", id: set, ["title": .string("edited offline")])
        try await a.engine.sync()
        try await b.engine.sync()
        let event = await Self.nextEvent(b.engine)
        guard case .removed("study_sets", set, false, true, let local?)? = event else {
            Issue.record("expected the removal with the discarded local version, got \(String(describing: event))")
            return
        }
        #expect(local["title"] == .string("edited offline"))
        #expect(try b.store.row("study_sets", id: set) == nil)
        #expect(try b.store.rejectedCount() == 1)
        #expect(try b.store.pendingCount() == 0)
        // The app's choice: keep the edit as a new set.
        let kept = try b.store.recreate("study_sets", from: local)
        try await b.engine.sync()
        try await a.sync { try a.store.row("study_sets", id: kept)?["title"] == .string("edited offline") }
    }

    @Test func aPoisonWriteIsRejectedWhileTheRestOfTheQueueLands() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let poison = try a.store.create("study_sets", ["title": .string(String(repeating: "x", count: 600))])
        let good = try a.store.create("study_sets", ["title": .string("fine")])
        let term = try a.store.create("terms", ["set_id": .string(good), "word": .string("hola"), "rank": .string("U")])
        try await a.engine.sync()
        let event = await Self.nextEvent(a.engine)
        guard case .rejected(let resource, let id, let status, let problem)? = event else {
            Issue.record("expected a rejection, got \(String(describing: event))")
            return
        }
        #expect(resource == "study_sets" && id == poison && status == 422)
        #expect((try? JSONValue.decode(problem))?.object?["code"] == .string("validation_failed"))
        #expect(try a.store.pendingCount() == 0)
        #expect(try a.store.rejectedCount() == 1)
        #expect(try a.store.state("study_sets", id: poison) == .rejected)
        #expect(try a.store.row("study_sets", id: poison) == nil, "a refused create rolls back locally")
        try await b.sync { try b.store.row("terms", id: term) != nil }
        #expect(try b.store.row("study_sets", id: good)?["title"] == .string("fine"))
        #expect(try b.store.row("terms", id: term)?["word"] == .string("hola"))
        #expect(try b.store.row("study_sets", id: poison) == nil)
    }

    @Test func aResponseLostAfterTheServerAppliedTheWriteIsRetriedWithoutADuplicate() async throws {
        let (server, alice, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        try a.store.create("study_sets", ["title": .string("once")])
        try a.store.update("study_sets", id: try #require(a.store.rows("study_sets").first?["id"]?.string), ["description": .string("d")])
        a.transport.inject(.dropResponse) { $0.method == "POST" && $0.path == "/v1/study_sets" }
        await #expect(throws: TransportFailure.self) { try await a.engine.sync() }
        #expect(try a.store.pendingCount() == 2, "the upload is still pending: its answer was lost")
        try await a.engine.sync()
        let posts = a.transport.delivered.filter { $0.method == "POST" && $0.path == "/v1/study_sets" }
        #expect(posts.count == 2)
        #expect(Set(posts.map { $0.headers["Idempotency-Key"] }).count == 1, "the retry carried the same key")
        #expect(try a.store.pendingCount() == 0)
        #expect(try await b.serverRows("study_sets", "title", "once", token: alice.token).count == 1, "one row on the server")
        try await b.sync { try !b.store.rows("study_sets").isEmpty }
        #expect(try b.store.rows("study_sets").filter { $0["title"] == .string("once") }.count == 1)
    }

    @Test func cursorExpiredWithLocalChangesPendingLosesNothing() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let set = try a.store.create("study_sets", ["title": .string("T")])
        let gone = try a.store.create("study_sets", ["title": .string("to be deleted elsewhere")])
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: gone) != nil }
        try b.store.delete("study_sets", id: gone)
        try await b.engine.sync()
        // A local edit, not uploaded; meanwhile the server purges past a's cursor.
        try a.store.update("study_sets", id: set, ["description": .string("kept through the resync")])
        try server.expireEveryCursor()
        // The horizon just moved to this moment; while another suite's
        // transaction that began before it runs, even a fresh cursor is behind
        // it and the engine says to come back later.
        try await waitUntilAsync("a's pull to be let past the new purge horizon", within: 120, every: 0.1) {
            do {
                try await a.engine.pull()
                return true
            } catch let refused as ServerRefusedForNow where refused.status == 410 {
                return false
            }
        }
        #expect(try a.store.row("study_sets", id: set)?["description"] == .string("kept through the resync"))
        #expect(try a.store.pendingCount() == 1)
        #expect(try a.store.row("study_sets", id: gone) == nil, "a row that vanished meanwhile is gone")
        try await a.engine.sync()
        try await b.sync { try b.store.row("study_sets", id: set)?["description"] == .string("kept through the resync") }
    }

    @Test func fiftyOfflineTapsOnOneFolderSetPairSendAtMostOneRequest() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let folder = try a.store.create("folders", ["name": .string("f")])
        let set = try a.store.create("study_sets", ["title": .string("s")])
        try await a.engine.sync()
        let before = a.transport.delivered.count
        // Add, remove, add, ... 51 taps offline, ending on "added".
        var link: String?
        for tap in 0..<51 {
            if tap % 2 == 0 {
                link = try a.store.create("folder_sets", ["folder_id": .string(folder), "set_id": .string(set)])
            } else if let current = link {
                try a.store.delete("folder_sets", id: current)
                link = nil
            }
            // What the UI shows after each tap is the local state, at once.
            #expect(try a.store.rows("folder_sets").count == (tap % 2 == 0 ? 1 : 0))
        }
        try await a.engine.sync()
        let writes = a.transport.delivered[before...].filter { $0.path.hasPrefix("/v1/folder_sets") && $0.method != "GET" }
        #expect(writes.count == 1, "\(writes.map { "\($0.method) \($0.path)" })")
        try await b.sync { try b.store.rows("folder_sets").count == 1 }
        #expect(try b.store.rows("folder_sets").map { $0["id"] } == [.string(try #require(link))])
    }
}
