import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A subscription's own 410 `cursor_expired` (docs/API.md, "Delta sync"): its
/// stream starts again from the beginning, its rows readable meanwhile, and at
/// the stream's end the rows no page brought again leave with a `removed` event.
/// They used to stay until the subscription was evicted. FerryWeb's browser test
/// does the same against its store.
extension SubscriptionIntegrationTests {
    @Test func aSubscriptionsRestartAfterCursorExpiredRemovesTheRowsTheServerDeleted() async throws {
        let w = try await Self.world(terms: 3)
        defer { w.server.stop() }
        let log = AnswerLog(URLSessionTransport(baseURL: w.server.baseURL))
        let phone = try Phone(w.server, token: w.bob.token, transport: log)
        try await phone.engine.subscribe(stream: "set", id: w.open)
        try await phone.sync { try phone.terms(of: w.open) == 3 }
        let terms = try phone.store.rows("terms", where: "set_id", equals: .string(w.open)).compactMap { $0["id"]?.string }.sorted()
        let (gone, edited, kept) = (terms[0], terms[1], terms[2])

        // Alice deletes one term and edits another; the phone is away.
        try w.teacher.store.delete("terms", id: gone)
        try w.teacher.store.update("terms", id: edited, ["word": .string("edited there")])
        try await w.teacher.engine.sync()
        // The server purges the tombstone and moves its horizon past every cursor:
        // the stream answers 410 from the phone's cursor, and its pages from the
        // beginning do not name the deleted term.
        try w.server.expireEveryCursor()
        // While a transaction older than the horizon runs, even a fresh cursor is behind it.
        try await waitUntilAsync("the phone's sync let past the new purge horizon", within: 120, every: 0.1) {
            do {
                try await phone.engine.sync()
                return true
            } catch {
                // The stream's 410 again (a fresh cursor behind the horizon), or the default stream's.
                guard "\(error)".contains("410") else { throw error }
                return false
            }
        }
        #expect(log.sent.contains { $0.status == 410 && $0.request.path.contains("stream=set") }, "the stream answered 410")
        #expect(try phone.store.row("terms", id: gone) == nil, "deleted before the restart: it left")
        #expect(try phone.store.row("terms", id: edited)?["word"] == .string("edited there"))
        #expect(try phone.store.row("terms", id: kept) != nil && phone.store.row("sets", id: w.open) != nil)
        var events: [SyncEvent] = []
        while let event = await SyncIntegrationTests.nextEvent(phone.engine, within: 1) { events.append(event) }
        let removed = events.filter { if case .removed = $0 { return true } else { return false } }
        #expect(removed == [.removed(resource: "terms", id: gone, revoked: false, discardedEdits: false)], "\(events)")
        // The stream's list no longer names it: an eviction now counts only what is left.
        #expect(try !phone.store.heldBySubscription("terms", id: gone))
    }
}
