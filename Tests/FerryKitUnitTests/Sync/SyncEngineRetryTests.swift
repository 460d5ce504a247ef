@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// The retry table (docs/FERRYKIT.md, "Retries") row by row, through the
/// engine: a scripted transport gives each answer, a fixed clock and a fixed
/// jitter draw make every due time exact. The time limit ends a hang (an event
/// that never comes).
@Suite(.timeLimit(.minutes(10)))
struct SyncEngineRetryTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    struct Fixture {
        let store: FerryStore
        let transport: ScriptedTransport
        let engine: SyncEngine
    }

    static func fixture(
        refresh: (@Sendable () async -> String?)? = nil, stalledAfter: Int = 3,
        whileSending: (@Sendable (TransportRequest) async -> Void)? = nil
    ) throws -> Fixture {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.schema)
        _ = try store.applyPage([], cursor: "c0") { _ in nil }  // synced before: the pull is a 304 check
        let transport = ScriptedTransport(whileSending: whileSending)
        // The app's refresh hook, if any, answers a 401; without one a 401 pauses.
        let tokens: any TokenProvider =
            refresh.map { refresh in
                TokenClosure { renew in renew ? await refresh().map { AccessToken($0) } : AccessToken("t1") }
            } ?? FixedToken("t1")
        let engine = SyncEngine(
            store: store, transport: transport, tokens: tokens, policy: RetryPolicy(base: 1, cap: 60),
            maxBulk: 1, stalledAfter: stalledAfter, now: { t0 }, random: { 0.5 })
        return Fixture(store: store, transport: transport, engine: engine)
    }

    /// A study set as the server would answer it.
    static func serverRow(_ id: String, revision: Int64, title: String = "T", description: String? = nil) -> [String: JSONValue] {
        [
            "id": .string(id), "creator_id": .string("u"), "title": .string(title), "description": description.map(JSONValue.string) ?? .null,
            "revision": .int(revision), "last_modified": .int(1), "is_deleted": .bool(false),
        ]
    }

    static func answer(_ status: Int, _ body: [String: JSONValue], headers: [String: String] = [:]) -> ScriptedTransport.Answer {
        .respond(
            TransportResponse(
                status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                body: JSONValue.object(body).encoded()))
    }

    static func problem(_ status: Int, _ code: String, current: [String: JSONValue]? = nil, headers: [String: String] = [:])
        -> ScriptedTransport.Answer
    {
        var body: [String: JSONValue] = ["code": .string(code), "status": .int(Int64(status)), "title": .string(code)]
        if let current { body["current"] = .object(current) }
        return answer(status, body, headers: headers)
    }

    /// A set the server already has (revision 1), edited locally.
    static func syncedAndEdited(_ f: Fixture, title: String = "local") throws -> String {
        let id = "00000000-0000-4000-8000-000000000001"
        _ = try f.store.applyPage([("study_sets", serverRow(id, revision: 1))], cursor: "c0") { _ in nil }
        try f.store.update("study_sets", id: id, ["title": .string(title)])
        return id
    }

    /// The next `count` events, buffered before `sync()` returned (``SyncEngine/nextEvents(_:)``: no deadline).
    static func events(_ engine: SyncEngine, count: Int) async -> [SyncEvent] {
        await engine.nextEvents(count)
    }

    @Test func noAnswerBacksOffWithFullJitterAndEachFailureMovesTheDueTime() async throws {
        let f = try Self.fixture()
        try f.store.create("study_sets", ["title": .string("T")])
        f.transport.script(.noAnswer, .noAnswer)
        await #expect(throws: TransportFailure.self) { try await f.engine.sync() }
        var status = await f.engine.currentStatus
        #expect(status.nextAttempt == Self.t0.addingTimeInterval(0.5), "uniform in [0, 1 s), the draw 0.5")
        #expect(!status.online && status.lastError != nil)
        await #expect(throws: TransportFailure.self) { try await f.engine.sync() }
        status = await f.engine.currentStatus
        #expect(status.nextAttempt == Self.t0.addingTimeInterval(1), "the second ceiling is 2 s")
        let entry = try #require(try f.store.outbox().first)
        #expect(entry.state == .pending && entry.attempts == 2)
        #expect(entry.lastError?.contains("transport_failure") == true)
        #expect(
            f.transport.writes.map(\.headers["Idempotency-Key"]).allSatisfy { $0 == f.transport.writes[0].headers["Idempotency-Key"] },
            "a retry carries the same key")
    }

    @Test func fiveHundredsAndFourTwentyNineWaitForRetryAfterInSecondsOrAsADate() async throws {
        let f = try Self.fixture()
        try f.store.create("study_sets", ["title": .string("T")])
        f.transport.script(Self.problem(503, "unavailable", headers: ["Retry-After": "7"]))
        await #expect(throws: ServerRefusedForNow(status: 503, retryAfter: 7)) { try await f.engine.sync() }
        #expect(await f.engine.currentStatus.nextAttempt == Self.t0.addingTimeInterval(7))
        #expect(try f.store.outbox().first?.nextAttempt == Self.t0.addingTimeInterval(7))

        let date = HTTPDateFormat.string(Self.t0.addingTimeInterval(30))
        f.transport.script(Self.problem(429, "too_many_requests", headers: ["Retry-After": date]))
        await #expect(throws: ServerRefusedForNow(status: 429, retryAfter: 30)) { try await f.engine.sync() }
        #expect(await f.engine.currentStatus.nextAttempt == Self.t0.addingTimeInterval(30))

        // No Retry-After: the backoff of this sync's attempt (the third: ceiling 4 s, draw 0.5).
        f.transport.script(Self.problem(500, "internal"))
        await #expect(throws: ServerRefusedForNow(status: 500, retryAfter: 2)) { try await f.engine.sync() }
        #expect(try f.store.pendingCount() == 1 && f.store.rejectedCount() == 0)
    }

    @Test func a401AsksTheAppForATokenAndSendsOnceMoreASecondPauses() async throws {
        let asked = Locked(0)
        let f = try Self.fixture(refresh: {
            asked.withLock { $0 += 1 }; return "t2"
        })
        let id = try f.store.create("study_sets", ["title": .string("T")])
        f.transport.script(Self.problem(401, "unauthorized"), Self.answer(201, Self.serverRow(id, revision: 1)))
        try await f.engine.sync()
        #expect(asked.withLock { $0 } == 1)
        #expect(f.transport.writes.map(\.headers["Authorization"]) == ["Bearer t1", "Bearer t2"])
        #expect(try f.store.pendingCount() == 0)

        try f.store.update("study_sets", id: id, ["title": .string("again")])
        f.transport.script(Self.problem(401, "unauthorized"), Self.problem(401, "unauthorized"))
        await #expect(throws: FerryKitError.unauthorized) { try await f.engine.sync() }
        #expect(await f.engine.currentStatus.paused)
        #expect(try f.store.outbox().map(\.state) == [.pending], "the write waits for the next sign-in")
    }

    @Test(arguments: [409, 412])
    func aConflictMergesWithTheServersVersionAndSendsAgainOnItsRevision(status: Int) async throws {
        let f = try Self.fixture()
        let id = try Self.syncedAndEdited(f, title: "mine")
        let theirs = Self.serverRow(id, revision: 2, title: "T", description: "theirs")
        f.transport.script(
            Self.problem(status, status == 409 ? "revision_conflict" : "precondition_failed", current: theirs),
            Self.answer(200, Self.serverRow(id, revision: 3, title: "mine", description: "theirs")))
        try await f.engine.sync()
        let resent = try #require(f.transport.writes.last)
        let sent = try #require(resent.body)
        let body = try #require(try JSONValue.decode(sent).object)
        #expect(body["revision"] == .int(2) && body["title"] == .string("mine"))
        #expect(body["description"] == nil, "only the field edited here is sent")
        let row = try #require(try f.store.row("study_sets", id: id))
        #expect(row["title"] == .string("mine") && row["description"] == .string("theirs") && row["revision"] == .int(3))
        #expect(try f.store.pendingCount() == 0)
    }

    /// The same request still running on the server (its earlier send's answer
    /// lost, or the app killed while it waited): wait, then the same key again,
    /// never a merge (the answer has no `current`: the write was rejected).
    @Test func a409IdempotencyKeyInUseWaitsAndSendsTheSameKeyAgain() async throws {
        let f = try Self.fixture()
        let id = try f.store.create("study_sets", ["title": .string("T")])
        f.transport.script(Self.problem(409, "idempotency_key_in_use", headers: ["Retry-After": "1"]))
        await #expect(throws: ServerRefusedForNow(status: 409, retryAfter: 1)) { try await f.engine.sync() }
        #expect(try f.store.pendingCount() == 1 && f.store.rejectedCount() == 0)
        #expect(try f.store.outbox().first?.nextAttempt == Self.t0.addingTimeInterval(1))
        f.transport.script(Self.answer(201, Self.serverRow(id, revision: 1), headers: ["Idempotent-Replayed": "true"]))
        try await f.engine.sync()
        #expect(try f.store.pendingCount() == 0 && f.store.rejectedCount() == 0)
        #expect(try f.store.state("study_sets", id: id) == .synced)
        let keys = f.transport.writes.map(\.headers["Idempotency-Key"])
        #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1], "the same key: \(keys)")
    }

    @Test func a410OnARowAppliesTheTombstoneAndTheEditBecomesRejectedWithAnEvent() async throws {
        let f = try Self.fixture()
        let id = try Self.syncedAndEdited(f)
        f.transport.script(Self.problem(410, "gone", current: ["id": .string(id), "is_deleted": .bool(true), "revision": .int(2)]))
        try await f.engine.sync()
        #expect(try f.store.row("study_sets", id: id) == nil)
        #expect(try f.store.rejectedCount() == 1 && f.store.pendingCount() == 0)
        let events = await Self.events(f.engine, count: 1)
        guard case .removed("study_sets", id, false, true, let local?)? = events.first, events.count == 1 else {
            Issue.record("expected one removal with the local version, got \(events)")
            return
        }
        #expect(local["title"] == .string("local"))
    }

    @Test(arguments: [400, 403, 404, 413, 415, 422])
    func anyOther4xxRejectsThatOperationWithItsProblemAndTheRestGoesOn(status: Int) async throws {
        let f = try Self.fixture()
        let poison = try f.store.create("study_sets", ["title": .string("poison")])
        let good = try f.store.create("study_sets", ["title": .string("good")])
        let refusal = Self.problem(status, "validation_failed")
        f.transport.script(refusal, Self.answer(201, Self.serverRow(good, revision: 1, title: "good")))
        try await f.engine.sync()
        #expect(try f.store.row("study_sets", id: poison) == nil, "a refused create disappears locally")
        #expect(try f.store.row("study_sets", id: good)?["revision"] == .int(1))
        #expect(try f.store.outbox().map(\.state) == [.rejected])
        guard case .respond(let answer) = refusal else { return }
        let events = await Self.events(f.engine, count: 1)
        #expect(events == [.rejected(resource: "study_sets", id: poison, status: status, problem: answer.body)])
    }

    @Test func aReplayedAnswerIsTheOriginalSuccess() async throws {
        let f = try Self.fixture()
        let id = try f.store.create("study_sets", ["title": .string("T")])
        f.transport.script(Self.answer(201, Self.serverRow(id, revision: 4), headers: ["Idempotent-Replayed": "true"]))
        try await f.engine.sync()
        #expect(try f.store.pendingCount() == 0)
        #expect(try f.store.row("study_sets", id: id)?["revision"] == .int(4))
        #expect(try f.store.state("study_sets", id: id) == .synced)
    }

    @Test func aQueueThatDoesNotMoveShowsAsStalledOnceWithItsLastError() async throws {
        let f = try Self.fixture(stalledAfter: 2)
        let id = try f.store.create("study_sets", ["title": .string("T")])
        f.transport.script(.noAnswer, Self.problem(503, "unavailable", headers: ["Retry-After": "1"]))
        await #expect(throws: TransportFailure.self) { try await f.engine.sync() }
        #expect(await f.engine.currentStatus.stalled == 0)
        await #expect(throws: ServerRefusedForNow.self) { try await f.engine.sync() }
        let status = await f.engine.currentStatus
        #expect(status.stalled == 1 && status.pending == 1)
        #expect(status.oldestPending != nil)
        let events = await Self.events(f.engine, count: 1)
        guard case .stalled(let resource, let row, let attempts, let lastError)? = events.first else {
            Issue.record("expected a stalled event, got \(events)")
            return
        }
        #expect(resource == "study_sets" && row == id && attempts == 2)
        #expect(lastError?.contains("unavailable") == true)
    }

    @Test func aRequestAwaitingItsAnswerShowsWhenItWasSent() async throws {
        let seen = Locked<[Date?]>([])
        let engineBox = Locked<SyncEngine?>(nil)
        let f = try Self.fixture(whileSending: { _ in
            guard let engine = engineBox.withLock({ $0 }) else { return }
            let since = await engine.currentStatus.inFlightSince
            seen.withLock { $0.append(since) }
        })
        engineBox.withLock { $0 = f.engine }
        let id = try f.store.create("study_sets", ["title": .string("T")])
        f.transport.script(Self.answer(201, Self.serverRow(id, revision: 1)))
        try await f.engine.sync()
        #expect(seen.withLock { $0 } == [Self.t0])
        #expect(await f.engine.currentStatus.inFlightSince == nil)
    }
}

/// RFC 9110's IMF-fixdate, for a `Retry-After` given as a date.
enum HTTPDateFormat {
    static func string(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
