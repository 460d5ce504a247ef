import FerryHTTPTestSupport
@testable import FerryKit
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// FerryKit's subscriptions against a real `ferry serve`: an app of public
/// sets (core 0025's `ferry.sync_public`) with a stream `set` of a set and
/// its terms, as docs/FERRYKIT.md's "Subscriptions" uses it.
@Suite(.serialized) struct SubscriptionIntegrationTests {
    static let app = [
        "0001_public_sets.sql": """
        CREATE SCHEMA app;
        CREATE TABLE app.sets (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                               owner_id uuid NOT NULL DEFAULT ferry.current_user_id() REFERENCES ferry.users,
                               title text NOT NULL, is_public boolean NOT NULL DEFAULT false);
        CREATE TABLE app.terms (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                set_id uuid NOT NULL REFERENCES app.sets, word text NOT NULL DEFAULT '');
        SELECT ferry.sync_owned('app.sets', owner => 'owner_id');
        SELECT ferry.sync_child('app.terms', parent => 'set_id');
        SELECT ferry.sync_public('app.sets', flag => 'is_public');
        SELECT ferry.sync_stream('set', scope => 'app.sets');
        """
    ]

    /// A clock the test moves, for TTLs.
    final class Clock: Sendable {
        let offset = Mutex<TimeInterval>(0)
        var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }
        func advance(_ seconds: TimeInterval) { offset.withLock { $0 += seconds } }
    }

    struct Phone {
        let store: FerryStore
        let engine: SyncEngine
        let clock = Clock()

        init(
            _ server: FerryServer, token: String, transport: (any Transport)? = nil,
            through wrap: (any Transport) -> any Transport = { $0 }
        ) throws {
            store = try FerryStore(path: ":memory:")
            let clock = self.clock
            engine = SyncEngine(
                store: store, transport: wrap(transport ?? URLSessionTransport(baseURL: server.baseURL)), tokens: FixedToken(token),
                policy: RetryPolicy(base: 0.01, cap: 0.05), now: { clock.now }, random: { 0.5 })
        }

        /// Syncs until `condition` holds (the feed serves a commit once every
        /// transaction running when it committed has ended, cluster-wide).
        func sync(until condition: () throws -> Bool) async throws {
            try await waitUntilAsync("sync to converge", within: 180) {
                try await engine.sync()
                return try condition()
            }
        }

        func terms(of set: String) throws -> Int { try store.rows("terms", where: "set_id", equals: .string(set)).count }
    }

    /// Counts a device's requests, and refuses them past a budget: a sync that
    /// loops fails the test with a named error instead of hanging it.
    final class RequestBudget: Transport {
        let inner: any Transport
        let limit: Int
        let sent = Mutex(0)

        init(_ inner: any Transport, limit: Int) { (self.inner, self.limit) = (inner, limit) }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let count = sent.withLock { sent in
                sent += 1
                return sent
            }
            guard count <= limit else { throw TransportFailure("request \(count) of a budget of \(limit): \(request.path)") }
            return try await inner.send(request)
        }
    }

    static func server(settings: [String: String] = [:]) throws -> FerryServer {
        let database = try ScratchDatabase(prefix: "ferrykit_subs", migrate: false)
        do {
            try database.applyMigrations(appFiles: app)
            return try FerryServer(database: database, settings: settings)
        } catch {
            database.drop()
            throw error
        }
    }

    /// The opening the tests share: a server of public sets, Alice and Bob,
    /// Alice's phone (the teacher's) after its first sync, and her set `open`,
    /// public or not, with `terms` terms. The caller stops `server`.
    struct World {
        let server: FerryServer
        let alice: (token: String, userID: String)
        let bob: (token: String, userID: String)
        let teacher: Phone
        let open: String
    }

    static func world(settings: [String: String] = [:], public isPublic: Bool = true, terms: Int) async throws -> World {
        let server = try Self.server(settings: settings)
        do {
            let alice = try await server.user("alice"), bob = try await server.user("bob")
            let teacher = try Phone(server, token: alice.token)
            try await teacher.engine.sync()
            let open = try await Self.set(teacher, public: isPublic, terms: terms)
            return World(server: server, alice: alice, bob: bob, teacher: teacher, open: open)
        } catch {
            server.stop()
            throw error
        }
    }

    /// Alice's set with `terms` terms, made on her phone and uploaded.
    static func set(_ phone: Phone, public isPublic: Bool, terms: Int) async throws -> String {
        let id = try phone.store.create("sets", ["title": .string("set"), "is_public": .bool(isPublic)])
        for n in 0..<terms { _ = try phone.store.create("terms", ["set_id": .string(id), "word": .string("w\(n)")]) }
        try await phone.engine.sync()
        #expect(try phone.store.pendingCount() == 0)
        return id
    }

    @Test func continuousModeFollowsASubscriptionLiveWithOneWait() async throws {
        // Waits of an hour: a term that arrives came by a wake, never by a wait's end.
        let w = try await Self.world(settings: ["FERRY_LIVE_MAX_WAIT_SECONDS": "3600"], terms: 1)
        defer { w.server.stop() }
        let (server, bob, teacher, open) = (w.server, w.bob, w.teacher, w.open)
        let transport = TimedTransport(URLSessionTransport(baseURL: server.baseURL, timeout: 3_700))
        let phone = try Phone(server, token: bob.token, transport: transport)
        try await phone.engine.subscribe(stream: "set", id: open)
        try await phone.sync { try phone.terms(of: open) == 1 }

        await phone.engine.start(longPollWait: 3_600)
        try await waitUntilAsync("the phone's wait on its streams", within: 60) {
            let waiting = await phone.engine.currentStatus.connected
            return waiting && transport.sent.last?.request.path == "/v1/changes/wait"
        }
        // From the wait now open: the next one may not have gone yet when the term is in.
        let started = transport.sent.count - 1
        // Alice adds a term: the phone, which writes nothing and whose wait lasts an hour, gets it.
        _ = try teacher.store.create("terms", ["set_id": .string(open), "word": .string("live")])
        try await teacher.engine.sync()
        try await waitUntilAsync("the term on the phone", within: 90) { try phone.terms(of: open) == 2 }
        await phone.engine.stop()
        let sent = transport.sent[started...].map(\.request)
        // No long poll of the default stream alone: the one wait covers both streams.
        #expect(!transport.sent.contains { $0.request.path.contains("wait=") }, "\(transport.sent.map(\.request.path))")
        #expect(sent.contains { $0.method == "POST" && $0.path == "/v1/changes/wait" })
        #expect(sent.contains { $0.path.hasPrefix("/v1/changes?") && $0.path.contains("stream=set:\(open)") })
        #expect(!sent.contains { $0.method != "GET" && $0.path != "/v1/changes/wait" }, "the phone uploaded though it wrote nothing")
        let body = try #require(transport.sent.last { $0.request.path == "/v1/changes/wait" }?.request.body)
        let since = try #require(try JSONDecoder().decode(JSONValue.self, from: body).object?["since"]?.object)
        #expect(Set(since.keys) == ["default", "set:\(open)"])
    }

    @Test func aPublicSetReachesTheDeviceThatSubscribedOnlyAndLeavesAfterItsTTL() async throws {
        let w = try await Self.world(terms: 3)
        defer { w.server.stop() }
        let (server, bob, teacher, open) = (w.server, w.bob, w.teacher, w.open)
        let closed = try await Self.set(teacher, public: false, terms: 1)

        // Bob's two devices sync: neither downloads the public set (nor Alice's private one).
        let phone = try Phone(server, token: bob.token), tablet = try Phone(server, token: bob.token)
        try await phone.engine.sync()
        try await tablet.engine.sync()
        #expect(try phone.store.rows("sets").isEmpty && phone.store.rows("terms").isEmpty)

        // The phone subscribes: the set and its terms arrive, synced.
        let sub = try await phone.engine.subscribe(stream: "set", id: open, ttl: .hours(1), priority: .high)
        #expect(try sub.state() == .queued)
        try await phone.sync { try phone.terms(of: open) == 3 }
        #expect(try phone.store.row("sets", id: open)?["is_public"] == .bool(true))
        #expect(try sub.state() == .synced)
        // A private set of someone else's subscribed to: nothing, as for a set that does not exist.
        let hidden = try await phone.engine.subscribe(stream: "set", id: closed)
        try await phone.engine.sync()
        #expect(try hidden.state() == .synced && phone.store.row("sets", id: closed) == nil)

        // Alice adds a term: the subscription follows it; the tablet, which did not subscribe, gets nothing.
        _ = try teacher.store.create("terms", ["set_id": .string(open), "word": .string("new")])
        try await teacher.engine.sync()
        try await phone.sync { try phone.terms(of: open) == 4 }
        try await tablet.engine.sync()
        #expect(try tablet.store.rows("sets").isEmpty && tablet.store.rows("terms").isEmpty)

        // Unsubscribed: the rows stay for the TTL, then leave with an event.
        try await phone.engine.unsubscribe(sub)
        try await phone.engine.sync()
        #expect(try phone.terms(of: open) == 4)
        phone.clock.advance(3_600)
        try await phone.engine.sync()
        // Emitted before sync() returned: buffered, so the deadline only guards against a hang.
        var evicted: SyncEvent?
        while evicted == nil, let event = await SyncIntegrationTests.nextEvent(phone.engine, within: 30) {
            if case .evicted = event { evicted = event }
        }
        #expect(evicted == .evicted(stream: "set", id: open, removed: 5, keptForEdits: 0))
        #expect(try phone.store.rows("sets").isEmpty && phone.store.rows("terms").isEmpty)
        #expect(try sub.state() == .none)
    }

    /// Subscribing again within the TTL to a stream where nothing changed
    /// (docs/GUIDE.md's "Sync what a device needs"): one `If-None-Match` check,
    /// answered 304, and the subscription is synced. It used to stay queued, and
    /// sync() sent that check forever.
    @Test func subscribingAgainWithinTheTTLToAnUnchangedStreamIsOneCheck() async throws {
        let w = try await Self.world(terms: 2)
        defer { w.server.stop() }
        let (server, bob, open) = (w.server, w.bob, w.open)

        var budget: RequestBudget?
        let phone = try Phone(server, token: bob.token) { inner in
            let bounded = RequestBudget(inner, limit: 1_000)
            budget = bounded
            return bounded
        }
        let requests = try #require(budget)
        let sub = try await phone.engine.subscribe(stream: "set", id: open, ttl: .hours(1))
        try await phone.sync { try phone.terms(of: open) == 2 }
        try await phone.engine.unsubscribe(sub)
        try await phone.engine.sync()

        let again = try await phone.engine.subscribe(stream: "set", id: open, ttl: .hours(1))
        #expect(try again.state() == .queued)
        let before = requests.sent.withLock { $0 }
        try await phone.engine.sync()
        #expect(try again.state() == .synced)
        #expect(try phone.terms(of: open) == 2)
        // The check, the default stream's page, and the synced subscription's check again: a handful, not a loop.
        #expect(requests.sent.withLock { $0 } - before <= 10)
    }

    @Test func aSetThatStopsBeingPublicLeavesItsSubscribersAndAnOfflineSubscriptionSyncsLater() async throws {
        let w = try await Self.world(terms: 2)
        defer { w.server.stop() }
        let (server, bob, teacher, open) = (w.server, w.bob, w.teacher, w.open)

        // Subscribed before any sync (offline, as far as the engine knows): the first sync brings it.
        let phone = try Phone(server, token: bob.token)
        let sub = try await phone.engine.subscribe(stream: "set", id: open)
        try await phone.sync { try phone.terms(of: open) == 2 }
        #expect(try sub.state() == .synced)

        // The set turns private: revoked entries in the stream remove its rows from Bob's store.
        try teacher.store.update("sets", id: open, ["is_public": .bool(false)])
        try await teacher.engine.sync()
        try await phone.sync { try phone.store.row("sets", id: open) == nil && phone.terms(of: open) == 0 }
        #expect(try teacher.terms(of: open) == 2)
    }
}
