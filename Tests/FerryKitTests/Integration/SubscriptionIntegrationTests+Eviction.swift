import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Continuous mode evicts when a TTL ends (issue 50): a device that only
/// listens runs no round for hours, and used to keep an unsubscribed stream's
/// rows until its next one.
extension SubscriptionIntegrationTests {
    @Test func aDeviceThatOnlyListensEvictsWhenTheTTLEndsWithNoRoundAndNoRequest() async throws {
        // Waits of an hour: nothing the server answers can explain the eviction.
        let w = try await Self.world(settings: ["FERRY_LIVE_MAX_WAIT_SECONDS": "3600"], terms: 2)
        defer { w.server.stop() }
        // A second set, kept: the device goes on waiting on its streams after the unsubscribe.
        let kept = try await Self.set(w.teacher, public: true, terms: 1)
        let log = AnswerLog(URLSessionTransport(baseURL: w.server.baseURL, timeout: 3_700))
        let phone = try Phone(w.server, token: w.bob.token, transport: log)
        let dropped = try await phone.engine.subscribe(stream: "set", id: w.open, ttl: .seconds(2))
        try await phone.engine.subscribe(stream: "set", id: kept)
        try await phone.sync { try phone.terms(of: w.open) == 2 && phone.terms(of: kept) == 1 }

        await phone.engine.start(longPollWait: 3_600)
        try await Self.waiting(phone, log, count: 1)
        let started = log.sent.count
        try await phone.engine.unsubscribe(dropped)
        #expect(try phone.terms(of: w.open) == 2, "kept for its TTL")
        // The TTL ends two seconds later; the wait lasts an hour, and nothing is written.
        try await waitUntilAsync("the unsubscribed set's rows gone", within: 60) {
            try phone.terms(of: w.open) == 0 && phone.store.row("sets", id: w.open) == nil
        }
        var evicted: SyncEvent?
        while evicted == nil, let event = await SyncIntegrationTests.nextEvent(phone.engine, within: 30) {
            if case .evicted = event { evicted = event }
        }
        #expect(evicted == .evicted(stream: "set", id: w.open, removed: 3, keptForEdits: 0))
        #expect(try dropped.state() == .none)
        #expect(try phone.terms(of: kept) == 1 && phone.store.row("sets", id: kept) != nil)
        let connected = await phone.engine.currentStatus.connected
        await phone.engine.stop()
        // No round and no request: the wait open before the unsubscribe was still the one open.
        #expect(connected)
        #expect(log.sent.count == started, "\(log.sent[started...].map(\.request.path))")
    }
}
