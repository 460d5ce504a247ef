import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Continuous mode with several subscriptions, counted over the wire: what a
/// wait's answer makes the device fetch, and waits split at the server's
/// `live.max_wait_streams`.
extension SubscriptionIntegrationTests {
    /// Every request a device sent, with the status it got (nil: no answer).
    final class AnswerLog: Transport {
        let inner: any Transport
        private let log = Mutex<[(request: TransportRequest, status: Int?)]>([])

        init(_ inner: any Transport) { self.inner = inner }

        var sent: [(request: TransportRequest, status: Int?)] { log.withLock { $0 } }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let index = log.withLock { log in
                log.append((request, nil))
                return log.count - 1
            }
            let response = try await inner.send(request)
            log.withLock { $0[index].status = response.status }
            return response
        }

        /// The `since` keys of each `POST /v1/changes/wait` from `start` on.
        func waits(from start: Int = 0) throws -> [Set<String>] {
            try sent[start...].filter { $0.request.path == "/v1/changes/wait" }.map { entry in
                let body = try JSONDecoder().decode(JSONValue.self, from: entry.request.body ?? Data())
                return Set(body.object?["since"]?.object?.keys.map { $0 } ?? [])
            }
        }
    }

    /// Alice's `count` public sets of one term each, and Bob's phone subscribed to them all and synced.
    static func follower(
        _ server: FerryServer, sets count: Int
    ) async throws -> (teacher: Phone, phone: Phone, log: AnswerLog, sets: [String]) {
        let alice = try await server.user("alice"), bob = try await server.user("bob")
        let teacher = try Phone(server, token: alice.token)
        try await teacher.engine.sync()
        var sets: [String] = []
        for _ in 0..<count { sets.append(try await Self.set(teacher, public: true, terms: 1)) }
        let log = AnswerLog(URLSessionTransport(baseURL: server.baseURL, timeout: 3_700))
        let phone = try Phone(server, token: bob.token, transport: log)
        for set in sets { try await phone.engine.subscribe(stream: "set", id: set) }
        try await phone.sync { try sets.allSatisfy { try phone.terms(of: $0) == 1 } }
        return (teacher, phone, log, sets)
    }

    /// Waits until `count` waits were sent from `start` on and the phone holds one open.
    static func waiting(_ phone: Phone, _ log: AnswerLog, count: Int, from start: Int = 0) async throws {
        try await waitUntilAsync("\(count) waits on the phone's streams", within: 90) {
            let connected = await phone.engine.currentStatus.connected
            let waits = try log.waits(from: start).count
            return connected && log.sent.last?.request.path == "/v1/changes/wait" && waits >= count
        }
    }

    @Test func aWaitsAnswerFetchesOnlyTheStreamsItNames() async throws {
        // Waits of an hour: a term that arrives came by a wake, never by a wait's end.
        let server = try Self.server(settings: ["FERRY_LIVE_MAX_WAIT_SECONDS": "3600"])
        defer { server.stop() }
        let (teacher, phone, log, sets) = try await Self.follower(server, sets: 3)
        await phone.engine.start(longPollWait: 3_600)
        try await Self.waiting(phone, log, count: 1)
        let started = log.sent.count
        // A term in one set: the wait names that stream, and the phone fetches it alone.
        _ = try teacher.store.create("terms", ["set_id": .string(sets[1]), "word": .string("live")])
        try await teacher.engine.sync()
        try await waitUntilAsync("the term on the phone", within: 90) { try phone.terms(of: sets[1]) == 2 }
        try await Self.waiting(phone, log, count: 1, from: started)
        await phone.engine.stop()
        let after = log.sent[started...].map(\.request)
        let fetched = after.filter { $0.method == "GET" }.map(\.path)
        #expect(!fetched.isEmpty)
        // Neither the default stream nor the two unchanged sets: each would have been a 304 request.
        #expect(fetched.allSatisfy { $0.contains("stream=set:\(sets[1])") }, "\(fetched)")
        #expect(!after.contains { $0.method != "GET" && $0.path != "/v1/changes/wait" }, "\(after.map(\.path))")
    }

    @Test func moreStreamsThanOneWaitTakesAreSplitAndAWriteToTheLastStillWakesTheDevice() async throws {
        let server = try Self.server(settings: ["FERRY_LIVE_MAX_WAIT_SECONDS": "3600", "FERRY_LIVE_MAX_WAIT_STREAMS": "2"])
        defer { server.stop() }
        let (teacher, phone, log, sets) = try await Self.follower(server, sets: 5)
        #expect(try phone.store.schema()?.live?.maxWaitStreams == 2)
        await phone.engine.start(longPollWait: 3_600)
        try await waitUntilAsync("the phone waiting", within: 90) {
            let connected = await phone.engine.currentStatus.connected
            return connected && log.sent.contains { $0.request.path == "/v1/changes/wait" || $0.request.path.contains("wait=") }
        }
        // A term in the set subscribed first (the last stream in the waits' order) wakes the phone.
        _ = try teacher.store.create("terms", ["set_id": .string(sets[0]), "word": .string("live")])
        try await teacher.engine.sync()
        try await waitUntilAsync("the term on the phone", within: 90) { try phone.terms(of: sets[0]) == 2 }
        await phone.engine.stop()
        // The default stream and five subscriptions: waits of two at most, together on all six.
        let waits = try log.waits()
        #expect(waits.count >= 3 && waits.allSatisfy { $0.count <= 2 }, "\(waits)")
        #expect(Set(waits.flatMap { $0 }) == Set(["default"] + sets.map { "set:\($0)" }), "\(waits)")
        // No wait refused, and no fall back to the default stream's own long poll.
        #expect(!log.sent.contains { $0.status == 400 }, "\(log.sent.map { ($0.request.path, $0.status) })")
        #expect(!log.sent.contains { $0.request.path.contains("wait=") }, "\(log.sent.map(\.request.path))")
    }

    /// Continuous mode on a server capped at two streams a wait, from a store
    /// that thinks otherwise: one refusal, one `GET /v1`, then waits of two at
    /// most, and a write to the first set reaches the phone; no fall back to the
    /// default stream's own long poll.
    static func expectItLearnsTheLimitFromTheFirstRefusal(
        _ teacher: Phone, _ phone: Phone, _ log: AnswerLog, _ sets: [String]
    ) async throws {
        let started = log.sent.count
        await phone.engine.start(longPollWait: 3_600)
        try await waitUntilAsync("the phone waiting", within: 90) {
            let connected = await phone.engine.currentStatus.connected
            return connected
                && log.sent[started...].contains { ($0.request.path == "/v1/changes/wait" || $0.request.path.contains("wait=")) && $0.status == nil }
        }
        _ = try teacher.store.create("terms", ["set_id": .string(sets[0]), "word": .string("live")])
        try await teacher.engine.sync()
        try await waitUntilAsync("the term on the phone", within: 90) { try phone.terms(of: sets[0]) == 2 }
        await phone.engine.stop()
        let after = log.sent[started...]
        #expect(after.filter { $0.status == 400 }.count == 1, "\(after.map { ($0.request.path, $0.status) })")
        #expect(after.contains { $0.request.path == "/v1" })
        #expect(try log.waits(from: started).dropFirst().allSatisfy { $0.count <= 2 })
        #expect(!after.contains { $0.request.path.contains("wait=") }, "\(after.map(\.request.path))")
        #expect(try phone.store.schema()?.live?.maxWaitStreams == 2)
    }

    @Test func aStoreThatDoesNotKnowTheLimitLearnsItFromTheFirstRefusal() async throws {
        let server = try Self.server(settings: ["FERRY_LIVE_MAX_WAIT_SECONDS": "3600", "FERRY_LIVE_MAX_WAIT_STREAMS": "2"])
        defer { server.stop() }
        let (teacher, phone, log, sets) = try await Self.follower(server, sets: 3)
        // Its schema as a server that did not give the limit left it.
        let schema = try #require(try phone.store.schema())
        try phone.store.apply(schema: ServerSchema(resources: schema.resources))
        #expect(try phone.store.schema()?.live == nil)
        try await Self.expectItLearnsTheLimitFromTheFirstRefusal(teacher, phone, log, sets)
    }

    @Test func aStoreWhoseLimitWasLoweredLearnsItFromTheFirstRefusal() async throws {
        let server = try Self.server(settings: ["FERRY_LIVE_MAX_WAIT_SECONDS": "3600", "FERRY_LIVE_MAX_WAIT_STREAMS": "4"])
        defer { server.stop() }
        let (teacher, phone, log, sets) = try await Self.follower(server, sets: 3)
        // The default stream and three subscriptions: one wait, as far as the store knows.
        #expect(try phone.store.schema()?.live?.maxWaitStreams == 4)
        // A deploy lowers the limit; the store's schema still says four.
        try server.restart(settings: ["FERRY_LIVE_MAX_WAIT_STREAMS": "2"])
        try await Self.expectItLearnsTheLimitFromTheFirstRefusal(teacher, phone, log, sets)
    }
}
