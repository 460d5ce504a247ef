@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// Subscriptions without a server: the scripted transport serves each
/// stream's pages and logs every read, a clock the test moves decides TTLs.
/// The time limit ends a hang (an event that never comes); no test keeps a
/// deadline of its own.
@Suite(.timeLimit(.minutes(10)))
struct SubscriptionTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    struct Fixture {
        let store: FerryStore
        let transport: ScriptedTransport
        let engine: SyncEngine
        let clock: Clock

        /// The stream requests sent so far, as `set:<id>`, in order (a stream once per page).
        var streamReads: [String] {
            transport.reads.compactMap { path in
                guard let range = path.range(of: "stream=") else { return nil }
                return String(path[range.upperBound...].prefix { $0 != "&" })
            }
        }
    }

    final class Clock: Sendable {
        let time = Locked(SubscriptionTests.t0)
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
    }

    static func fixture(path: String = ":memory:", whileReading: (@Sendable (TransportRequest) async -> Void)? = nil) throws -> Fixture {
        let store = try FerryStore(path: path)
        try store.apply(schema: ExampleSchema.schema)
        _ = try store.applyPage([], cursor: "c0") { _ in nil }  // the default stream synced before
        let transport = ScriptedTransport(whileReading: whileReading)
        let clock = Clock()
        let engine = SyncEngine(
            store: store, transport: transport, tokens: FixedToken("t1"), policy: RetryPolicy(base: 1, cap: 60), now: { clock.now },
            random: { 0.5 })
        return Fixture(store: store, transport: transport, engine: engine, clock: clock)
    }

    static func set(_ id: String, revision: Int64 = 1) -> String {
        #"{"resource":"study_sets","data":{"id":"\#(id)","creator_id":"u","title":"T","revision":\#(revision),"last_modified":1,"is_deleted":false}}"#
    }

    static func term(_ id: String, set: String, revision: Int64 = 1) -> String {
        #"{"resource":"terms","data":{"id":"\#(id)","set_id":"\#(set)","word":"w","rank":"a","revision":\#(revision),"last_modified":1,"is_deleted":false}}"#
    }

    static func page(_ entries: String...) -> String { "[" + entries.joined(separator: ",") + "]" }

    /// A set with `terms` terms, served as stream `set:<id>` in one page each for the set and every two terms.
    static func serve(_ f: Fixture, set id: String, terms: Int) {
        var pages = [page(set(id))]
        var entries: [String] = []
        for n in 0..<terms {
            entries.append(term("\(id)-t\(n)", set: id))
            if entries.count == 2 || n == terms - 1 {
                pages.append("[" + entries.joined(separator: ",") + "]")
                entries = []
            }
        }
        f.transport.serve(stream: "set:\(id)", pages: pages)
    }

    /// The next `count` events; the engine emits them before `sync()` returns,
    /// so they are buffered by then (``SyncEngine/nextEvents(_:)``: no deadline).
    static func events(_ engine: SyncEngine, _ count: Int) async -> [SyncEvent] {
        await engine.nextEvents(count)
    }

    @Test func theQueueGoesByPriorityThenTheLatestOpenedAndDropsWhatWasUnsubscribed() async throws {
        let f = try Self.fixture()
        for id in ["a", "b", "c", "d"] { Self.serve(f, set: id, terms: 1) }
        let a = try await f.engine.subscribe(stream: "set", id: "a")
        let b = try await f.engine.subscribe(stream: "set", id: "b", priority: .high)
        let c = try await f.engine.subscribe(stream: "set", id: "c")
        let d = try await f.engine.subscribe(stream: "set", id: "d", priority: .high)
        try await f.engine.unsubscribe(d)
        #expect(try a.state() == .queued && b.state() == .queued)
        try await f.engine.sync()

        // Every new subscription before the default stream's check: b (high),
        // then c and a (normal, the later first); d was dropped before it synced.
        let defaultCheck = try #require(f.transport.reads.firstIndex { $0.hasPrefix("/v1/changes") && !$0.contains("stream=") })
        #expect(
            Array(f.transport.reads.prefix(defaultCheck)) == [
                "/v1/changes?limit=2000&stream=set:b", "/v1/changes?limit=2000&stream=set:b&since=set:b#1",
                "/v1/changes?limit=2000&stream=set:c", "/v1/changes?limit=2000&stream=set:c&since=set:c#1",
                "/v1/changes?limit=2000&stream=set:a", "/v1/changes?limit=2000&stream=set:a&since=set:a#1",
            ], "\(f.transport.reads)")
        // After it, the synced subscriptions' check for anything new (304 here).
        #expect(f.streamReads.dropFirst(6) == ["set:b", "set:c", "set:a"])
        #expect(try a.state() == .synced && b.state() == .synced && c.state() == .synced)
        #expect(try d.state() == .unsubscribed(evictsAt: Self.t0 + 86_400))
        #expect(try f.store.row("terms", id: "b-t0") != nil && f.store.row("study_sets", id: "d") == nil)

        // The next sync only checks the synced ones (304), the default stream between.
        let before = f.transport.reads.count
        try await f.engine.sync()
        let next = f.transport.reads.dropFirst(before)
        #expect(next.filter { $0.contains("stream=") }.count == 3 && next.allSatisfy { !$0.contains("stream=set:d") }, "\(next)")
    }

    @Test func theStreamJustOpenedOvertakesTheOneDownloading() async throws {
        let opened = Locked<SyncEngine?>(nil)
        let f = try Self.fixture(whileReading: { request in
            // While the first page of set a downloads, the app opens set b.
            guard request.path.contains("stream=set:a"), !request.path.contains("since="), let engine = opened.withLock({ $0 }) else { return }
            _ = try? await engine.subscribe(stream: "set", id: "b")
        })
        opened.withLock { $0 = f.engine }
        Self.serve(f, set: "a", terms: 6)  // four pages
        Self.serve(f, set: "b", terms: 1)
        let a = try await f.engine.subscribe(stream: "set", id: "a")
        try await f.engine.sync()
        // a's first page, then b whole, then the rest of a; the default stream, then both checked.
        #expect(f.streamReads == ["set:a", "set:b", "set:b", "set:a", "set:a", "set:a", "set:b", "set:a"], "\(f.transport.reads)")
        #expect(try a.state() == .synced)
        #expect(try f.store.rows("terms", where: "set_id", equals: .string("a")).count == 6)
    }

    @Test func aStreamDroppedWhileItDownloadsStopsAtThePageInFlight() async throws {
        let engine = Locked<SyncEngine?>(nil)
        let f = try Self.fixture(whileReading: { request in
            // The app closes set a while its first page is on the way.
            guard request.path == "/v1/changes?limit=2000&stream=set:a", let engine = engine.withLock({ $0 }) else { return }
            for sub in (try? await engine.subscriptions()) ?? [] { try? await engine.unsubscribe(sub) }
        })
        engine.withLock { $0 = f.engine }
        Self.serve(f, set: "a", terms: 6)  // four pages
        let a = try await f.engine.subscribe(stream: "set", id: "a", ttl: .days(1))
        try await f.engine.sync()
        #expect(f.streamReads == ["set:a"], "\(f.transport.reads)")
        #expect(try a.state() == .unsubscribed(evictsAt: Self.t0 + 86_400))
        // The page that arrived is applied and recorded as the stream's, for its eviction.
        #expect(try f.store.row("study_sets", id: "a") != nil)
        f.clock.advance(86_400)
        try await f.engine.sync()
        #expect(try f.store.row("study_sets", id: "a") == nil && a.state() == .none)
    }

    @Test func aSubscriptionMadeOfflineIsKeptAndSyncsOnceOnline() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ferrykit-sub-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("store.sqlite").path
        do {
            let f = try Self.fixture(path: path)
            f.transport.offline = true
            let sub = try await f.engine.subscribe(stream: "set", id: "s", ttl: .days(7), priority: .high)
            await #expect(throws: TransportFailure.self) { try await f.engine.sync() }
            #expect(try sub.state() == .queued)
        }
        // The app restarts; the subscription is in the store, and syncs with the first round online.
        let f = try Self.fixture(path: path)
        Self.serve(f, set: "s", terms: 3)
        let subs = try await f.engine.subscriptions()
        #expect(subs.map(\.id) == ["s"])
        try await f.engine.sync()
        #expect(try subs[0].state() == .synced)
        #expect(try f.store.rows("terms", where: "set_id", equals: .string("s")).count == 3)
        #expect(f.transport.reads.first { $0.contains("stream=") } == "/v1/changes?limit=2000&stream=set:s")
    }

    @Test func afterItsTTLAnUnsubscribedStreamLeavesExceptRowsHeldElsewhere() async throws {
        let f = try Self.fixture()
        Self.serve(f, set: "s", terms: 3)
        Self.serve(f, set: "o", terms: 0)
        let sub = try await f.engine.subscribe(stream: "set", id: "s", ttl: .hours(1))
        try await f.engine.sync()
        #expect(try f.store.rows("terms").count == 3)
        // s-t0 is in the default stream too (shared with the user), s-t1 in another subscription.
        let shared = try #require(JSONValue.decode(Data(Self.term("s-t0", set: "s").utf8)).object?["data"]?.object)
        _ = try f.store.applyPage([("terms", shared)], cursor: "c1") { _ in nil }
        f.transport.serve(stream: "set:o", pages: [Self.page(Self.set("o"), Self.term("s-t1", set: "s"))])
        try await f.engine.subscribe(stream: "set", id: "o")
        try await f.engine.sync()

        try await f.engine.unsubscribe(sub)
        f.clock.advance(3_599)
        let before = f.transport.reads.count
        try await f.engine.sync()
        #expect(try f.store.rows("terms").count == 3, "a warm cache until the TTL ends")
        #expect(!f.transport.reads.dropFirst(before).contains { $0.contains("stream=set:s") }, "an unsubscribed stream is not followed")

        let told = Task { await Self.events(f.engine, 1) }
        f.clock.advance(1)
        try await f.engine.sync()
        #expect(await told.value == [.evicted(stream: "set", id: "s", removed: 2, keptForEdits: 0)])
        #expect(try f.store.row("study_sets", id: "s") == nil && f.store.row("terms", id: "s-t2") == nil)
        #expect(try f.store.row("terms", id: "s-t0") != nil, "the default stream holds it")
        #expect(try f.store.row("terms", id: "s-t1") != nil, "another subscription holds it")
        #expect(try sub.state() == .none)
    }

    @Test func aTTLOf0EvictsAtUnsubscribeWithNoSync() async throws {
        let f = try Self.fixture()
        Self.serve(f, set: "s", terms: 2)
        let sub = try await f.engine.subscribe(stream: "set", id: "s", ttl: .zero)
        try await f.engine.sync()
        #expect(try f.store.rows("terms").count == 2)
        let reads = f.transport.reads.count
        let told = Task { await Self.events(f.engine, 1) }
        try await f.engine.unsubscribe(sub)
        // As FerryWeb's: gone when unsubscribe returns, with its event, and nothing sent.
        #expect(try f.store.rows("terms").isEmpty && f.store.row("study_sets", id: "s") == nil)
        #expect(await told.value == [.evicted(stream: "set", id: "s", removed: 3, keptForEdits: 0)])
        #expect(try sub.state() == .none)
        #expect(f.transport.reads.count == reads)
    }

    @Test func rowsWithPendingEditsStayUntilTheirEditsAreSettled() async throws {
        let f = try Self.fixture()
        Self.serve(f, set: "s", terms: 2)
        let sub = try await f.engine.subscribe(stream: "set", id: "s", ttl: .zero)
        try await f.engine.sync()
        try f.store.update("terms", id: "s-t0", ["word": .string("mine")])
        try await f.engine.unsubscribe(sub)

        // The upload gets no answer: the edited term stays, the rest leaves.
        f.transport.script(.noAnswer)
        let first = Task { await Self.events(f.engine, 1) }
        await #expect(throws: TransportFailure.self) { try await f.engine.sync() }
        #expect(await first.value == [.evicted(stream: "set", id: "s", removed: 2, keptForEdits: 1)])
        #expect(try f.store.row("terms", id: "s-t0")?["word"] == .string("mine") && f.store.row("terms", id: "s-t1") == nil)
        #expect(try sub.state() == .unsubscribed(evictsAt: Self.t0))

        // The server refuses the edit (a public set is not the user's to write): then it leaves too.
        f.transport.script(.respond(ScriptedTransport.json(403, #"{"code":"forbidden","status":403,"title":"forbidden"}"#)))
        let second = Task { await Self.events(f.engine, 2) }
        try await f.engine.sync()
        let events = await second.value
        #expect(events.contains(.evicted(stream: "set", id: "s", removed: 1, keptForEdits: 0)), "\(events)")
        #expect(try f.store.row("terms", id: "s-t0") == nil)
        #expect(try sub.state() == .none)
    }

    /// No deadline of its own: a 60 s one failed it in a loaded CI run (the engine's many
    /// small steps queued behind the suites' blocking tests on the 2 cooperative threads, while
    /// the deadline needed one wake). The suite's time limit only ends a real hang.
    @Test func aTypedSubscriptionInContinuousModeSyncsWithNoSyncCalled() async throws {
        let f = try Self.fixture()
        Self.serve(f, set: "s", terms: 2)
        await f.engine.start(uploadDelay: 0.05, longPollWait: 1)
        let sub = try await f.engine.subscribe(TestSet.self, id: FerryID("s"), ttl: .days(7), priority: .high)
        #expect(sub.stream == "set" && sub.id == "s")
        // Its state as an app observes it, until it is synced.
        var seen: [SubscriptionState] = []
        for try await state in sub.states() {
            seen.append(state)
            if state == .synced { break }
        }
        await f.engine.stop()
        #expect(seen.last == .synced, "\(seen)")
        #expect(try f.store.rows("terms", where: "set_id", equals: .string("s")).count == 2)
        #expect(try await f.engine.subscriptions() == [sub])
    }

    @Test func aStreamWhoseCursorExpiredStartsAgainFromTheBeginning() async throws {
        let f = try Self.fixture()
        Self.serve(f, set: "s", terms: 2)
        let sub = try await f.engine.subscribe(stream: "set", id: "s")
        // Synced long ago: its cursor is now behind the server's purge horizon.
        _ = try f.store.applyStreamPage([], stream: "set", id: "s", cursor: ScriptedTransport.expired, synced: true) { _ in nil }
        #expect(try sub.state() == .synced)
        try await f.engine.sync()
        let reads = f.transport.reads.filter { $0.contains("stream=") }
        #expect(reads.first == "/v1/changes?limit=2000&stream=set:s&since=expired", "\(reads)")
        #expect(reads.dropFirst().first == "/v1/changes?limit=2000&stream=set:s", "from the beginning: \(reads)")
        #expect(try f.store.rows("terms", where: "set_id", equals: .string("s")).count == 2)
        #expect(try sub.state() == .synced)
    }

    @Test func revokedEntriesInAStreamRemoveRowsAndARefusedStreamLeavesTheQueue() async throws {
        let f = try Self.fixture()
        f.transport.serve(
            stream: "set:s",
            pages: [
                Self.page(Self.set("s"), Self.term("t", set: "s")),
                Self.page(#"{"resource":"terms","data":{"id":"t","is_deleted":true,"revoked":true}}"#),
            ])
        let sub = try await f.engine.subscribe(stream: "set", id: "s")
        try await f.engine.sync()
        #expect(try f.store.row("terms", id: "t") == nil && f.store.row("study_sets", id: "s") != nil)
        #expect(try sub.state() == .synced)

        // A 400 (a stream name the server does not declare) is refused for good; the rest goes on.
        f.transport.refuse(stream: "nope:x")
        let bad = try await f.engine.subscribe(stream: "nope", id: "x", priority: .high)
        f.transport.serve(stream: "set:later", pages: [Self.page(Self.set("later"))])
        let later = try await f.engine.subscribe(stream: "set", id: "later")
        try await f.engine.sync()
        #expect(try later.state() == .synced)
        #expect(try bad.state() == .refused("no stream named nope:x"))
        // It is not asked again.
        let before = f.transport.reads.count
        try await f.engine.sync()
        #expect(!f.transport.reads.dropFirst(before).contains { $0.contains("stream=nope") })
    }
}

/// The initial sync's Index pages leave public rows out, and still work with a server that predates them.
struct PrivateIndexTests {
    /// A server before public rows: `public` is an unknown query parameter (400), anything else an empty page.
    final class OldServer: Transport {
        let paths = Locked<[String]>([])
        func send(_ request: TransportRequest) async throws -> TransportResponse {
            paths.withLock { $0.append(request.path) }
            if request.path.contains("public=") {
                return ScriptedTransport.json(400, #"{"code":"invalid_query","status":400,"detail":"unknown query parameter or column: public"}"#)
            }
            guard request.path.hasPrefix("/v1/study_sets") else { return ScriptedTransport.read(request) }
            let row = #"{"id":"s","creator_id":"u","title":"T","revision":1,"last_modified":1,"is_deleted":false}"#
            return ScriptedTransport.json(200, #"{"data":[\#(row)],"paging":{"token":null,"page":1,"pages":1,"total":1,"next":null}}"#)
        }
    }

    @Test func anOldServerThatRefusesPublicFalseIsAskedWithoutIt() async throws {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.schema)
        let server = OldServer()
        let engine = SyncEngine(store: store, transport: server, tokens: FixedToken("t"))
        try await engine.sync()
        #expect(try store.row("study_sets", id: "s") != nil)
        let paths = server.paths.withLock { $0 }
        #expect(paths.contains("/v1/study_sets?limit=1000&order=id&public=false"))
        #expect(paths.contains("/v1/study_sets?limit=1000&order=id"), "\(paths)")
    }
}
