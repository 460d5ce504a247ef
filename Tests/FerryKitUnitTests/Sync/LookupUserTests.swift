@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// ``SyncEngine/lookupUser(name:)`` against scripted answers: a user for a
/// 200, nil for the 404, the 429's `Retry-After` as a date, the name sent
/// encoded, and the engine's token renewed on a 401 as for every request.
@Suite struct LookupUserTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func engine(_ tokens: any TokenProvider = FixedToken("t1")) throws -> (ScriptedTransport, SyncEngine) {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.schema)
        let transport = ScriptedTransport()
        let engine = SyncEngine(store: store, transport: transport, tokens: tokens, now: { t0 }, random: { 0.5 })
        return (transport, engine)
    }

    @Test func aNameFoundIsItsUserAndTheNameIsSentEncoded() async throws {
        let (transport, engine) = try Self.engine()
        transport.scriptLookups(.respond(ScriptedTransport.json(200, #"{"id":"u-7","name":"ann+work@example.com"}"#)))
        let user = try await engine.lookupUser(name: "ann+work@example.com")
        #expect(user == FoundUser(id: "u-7", name: "ann+work@example.com"))
        let sent = try #require(transport.lookupsSent.first)
        #expect(sent.path == "/v1/users/lookup?name=ann%2Bwork%40example.com", "a + must not arrive as a space")
        #expect(sent.headers["Authorization"] == "Bearer t1")
    }

    @Test func aNameNobodyCanBeFoundByIsNil() async throws {
        let (transport, engine) = try Self.engine()
        transport.scriptLookups(
            .respond(ScriptedTransport.json(404, #"{"code":"not_found","status":404,"detail":"no user with that name can be found"}"#)))
        #expect(try await engine.lookupUser(name: "nobody") == nil)
    }

    @Test func tooManyLookupsThrowWhenToAskAgain() async throws {
        let (transport, engine) = try Self.engine()
        transport.scriptLookups(
            .respond(ScriptedTransport.json(429, #"{"code":"rate_limited","status":429}"#, headers: ["Retry-After": "120"])))
        await #expect(throws: UserLookupError.rateLimited(retryAfter: Self.t0.addingTimeInterval(120))) {
            try await engine.lookupUser(name: "ann")
        }
    }

    @Test func aBadNameAndOtherRefusalsThrowTheServersDetail() async throws {
        let (transport, engine) = try Self.engine()
        transport.scriptLookups(
            .respond(ScriptedTransport.json(400, #"{"code":"invalid_query","status":400,"detail":"name is 1 to 128 of ..."}"#)),
            .respond(ScriptedTransport.json(503, #"{"code":"unavailable","status":503,"detail":"the database is down"}"#)))
        await #expect(throws: UserLookupError.invalidName(detail: "name is 1 to 128 of ...")) {
            try await engine.lookupUser(name: "a b")
        }
        await #expect(throws: UserLookupError.refused(status: 503, detail: "the database is down")) {
            try await engine.lookupUser(name: "ann")
        }
    }

    @Test func a401RenewsTheTokenAndAsksOnceMore() async throws {
        let count = Locked(0)
        let tokens = TokenClosure { _ in AccessToken("t\(count.withLock { $0 += 1; return $0 })") }
        let (transport, engine) = try Self.engine(tokens)
        transport.scriptLookups(
            .respond(ScriptedTransport.json(401, #"{"code":"unauthorized"}"#)),
            .respond(ScriptedTransport.json(200, #"{"id":"u-7","name":"ann"}"#)))
        #expect(try await engine.lookupUser(name: "ann") == FoundUser(id: "u-7", name: "ann"))
        #expect(transport.lookupsSent.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t2"])
    }

    @Test func noAnswerIsTheTransportsError() async throws {
        let (_, engine) = try Self.engine()
        await #expect(throws: TransportFailure.self) { try await engine.lookupUser(name: "ann") }
    }
}
