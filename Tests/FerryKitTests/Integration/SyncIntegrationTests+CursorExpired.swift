import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// What a client does after 410 `cursor_expired` (docs/API.md, "Delta sync";
/// FerryWeb's browser test does the same against its store): the initial sync
/// again, the rows readable meanwhile; at its end the rows no page brought
/// leave with a `removed` event, but those with edits waiting stay.
extension SyncIntegrationTests {
    @Test func aRestartAfterCursorExpiredKeepsRowsReadableThenRemovesWhatTheServerDeleted() async throws {
        let (server, _, a, b) = try await Self.twoDevices()
        defer { server.stop() }
        let kept = try a.store.create("study_sets", ["title": .string("kept")])
        let gone = try a.store.create("study_sets", ["title": .string("deleted there")])
        let edited = try a.store.create("study_sets", ["title": .string("edited there")])
        let mine = try a.store.create("study_sets", ["title": .string("deleted there, edited here")])
        try await a.engine.sync()
        try await b.sync { try [kept, gone, edited, mine].allSatisfy { try b.store.row("study_sets", id: $0) != nil } }
        try b.store.delete("study_sets", id: gone)
        try b.store.delete("study_sets", id: mine)
        try b.store.update("study_sets", id: edited, ["title": .string("new title")])
        try await b.engine.sync()
        // An edit on a, not uploaded (pull() only downloads).
        try a.store.update("study_sets", id: mine, ["description": .string("mine, waiting")])
        // The server purges its tombstones and moves its horizon past a's cursor.
        try server.expireEveryCursor()
        // The restart is cut at its study_sets page: what the store held is still there.
        a.transport.inject(.dropRequest) { $0.method == "GET" && $0.path.hasPrefix("/v1/study_sets?") }
        await #expect(throws: (any Error).self) { try await a.engine.pull() }
        #expect(a.transport.answers.contains { $0.status == 410 }, "the feed answered 410")
        for id in [kept, gone, edited, mine] {
            #expect(try a.store.row("study_sets", id: id) != nil, "readable while the pages come: \(id)")
        }
        // While a transaction older than the horizon runs, even a fresh cursor is behind it.
        try await waitUntilAsync("a's pull to be let past the new purge horizon", within: 120, every: 0.1) {
            do {
                try await a.engine.pull()
                return true
            } catch let refused as ServerRefusedForNow where refused.status == 410 {
                return false
            }
        }
        #expect(try a.store.row("study_sets", id: gone) == nil, "deleted before the new cursor: it left")
        #expect(try a.store.row("study_sets", id: kept)?["title"] == .string("kept"))
        #expect(try a.store.row("study_sets", id: edited)?["title"] == .string("new title"))
        #expect(try a.store.row("study_sets", id: mine)?["description"] == .string("mine, waiting"), "its edit waiting: it stays")
        #expect(try a.store.pendingCount() == 1)
        // Every event since a was made (none removed a row before the purge); read once
        // at the end: a read cut short by its deadline ends the stream.
        var events: [SyncEvent] = []
        while let event = await Self.nextEvent(a.engine, within: 1) { events.append(event) }
        let removed = events.filter { if case .removed = $0 { return true } else { return false } }
        #expect(removed == [.removed(resource: "study_sets", id: gone, revoked: false, discardedEdits: false)], "\(events)")
    }
}
