@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// The engine's bearer tokens from a ``TokenProvider``: asked once, renewed
/// before they expire and after a 401, and a provider without a token pauses
/// sync while one that cannot be reached only fails the round.
@Suite struct TokenProviderTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// A provider that hands out t1, t2, ... with the given lifetime, and keeps how it was asked.
    final class Issuer: TokenProvider {
        let lifetime: TimeInterval?
        let asked = Locked<[Bool]>([])
        let failing: Bool

        init(lifetime: TimeInterval? = nil, failing: Bool = false) { (self.lifetime, self.failing) = (lifetime, failing) }

        func token(refresh: Bool) async throws -> AccessToken? {
            let count = asked.withLock {
                $0.append(refresh); return $0.count
            }
            if failing { throw TransportFailure("the identity provider is down") }
            return AccessToken("t\(count)", expiresAt: lifetime.map { TokenProviderTests.t0.addingTimeInterval($0) })
        }
    }

    static func engine(_ tokens: any TokenProvider) throws -> (FerryStore, ScriptedTransport, SyncEngine) {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.schema)
        _ = try store.applyPage([], cursor: "c0") { _ in nil }
        let transport = ScriptedTransport()
        let engine = SyncEngine(
            store: store, transport: transport, tokens: tokens, policy: RetryPolicy(base: 1, cap: 60), maxBulk: 1,
            now: { t0 }, random: { 0.5 })
        return (store, transport, engine)
    }

    static func created(_ id: String) -> ScriptedTransport.Answer {
        .respond(ScriptedTransport.json(201, #"{"id":"\#(id)","title":"T","revision":1,"last_modified":1,"is_deleted":false}"#))
    }

    @Test func aTokenIsAskedForOnceAndKept() async throws {
        let issuer = Issuer()
        let (store, transport, engine) = try Self.engine(issuer)
        let id = try store.create("study_sets", ["title": .string("T")])
        transport.script(Self.created(id))
        try await engine.sync()
        try await engine.sync()
        #expect(issuer.asked.withLock { $0 } == [false])
        #expect(transport.writes.map { $0.headers["Authorization"] } == ["Bearer t1"])
    }

    @Test func aTokenAboutToExpireIsRenewedBeforeTheNextRequest() async throws {
        // The first token lapses in 30 s, inside the minute of renewal; the next lives an hour.
        let lifetimes = Locked<[TimeInterval]>([30, 3_600])
        let asked = Locked<[Bool]>([])
        let tokens = TokenClosure { refresh in
            let (count, lifetime) = asked.withLock {
                $0.append(refresh); return ($0.count, lifetimes.withLock { $0.removeFirst() })
            }
            return AccessToken("t\(count)", expiresAt: Self.t0.addingTimeInterval(lifetime))
        }
        let (store, transport, engine) = try Self.engine(tokens)
        let first = try store.create("study_sets", ["title": .string("T")])
        let second = try store.create("study_sets", ["title": .string("U")])
        transport.script(Self.created(first), Self.created(second))
        try await engine.sync()
        #expect(asked.withLock { $0 } == [false, true], "a new token before the one about to lapse is sent again")
        #expect(transport.writes.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t2"])
    }

    @Test func a401AsksForANewTokenAndSendsOnceMore() async throws {
        let issuer = Issuer(lifetime: 3_600)
        let (store, transport, engine) = try Self.engine(issuer)
        let id = try store.create("study_sets", ["title": .string("T")])
        transport.script(.respond(ScriptedTransport.json(401, #"{"code":"unauthorized"}"#)), Self.created(id))
        try await engine.sync()
        #expect(issuer.asked.withLock { $0 } == [false, true])
        #expect(transport.writes.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t2"])
        let paused = await engine.currentStatus.paused
        #expect(try store.pendingCount() == 0 && !paused)
    }

    @Test func aFixedTokenRefusedPausesAtOnceWithoutARetry() async throws {
        let (store, transport, engine) = try Self.engine(FixedToken("issued"))
        try store.create("study_sets", ["title": .string("T")])
        transport.script(.respond(ScriptedTransport.json(401, #"{"code":"unauthorized"}"#)))
        await #expect(throws: FerryKitError.unauthorized) { try await engine.sync() }
        let paused = await engine.currentStatus.paused
        #expect(transport.writes.count == 1 && paused)
        #expect(try store.pendingCount() == 1, "the write waits for the next sign-in")
    }

    @Test func aProviderWithoutATokenPausesAndOneThatCannotBeReachedFailsTheRound() async throws {
        let (_, _, signedOut) = try Self.engine(TokenClosure { _ in nil })
        await #expect(throws: FerryKitError.unauthorized) { try await signedOut.sync() }
        let paused = await signedOut.currentStatus.paused
        #expect(paused)

        let (_, _, unreachable) = try Self.engine(Issuer(failing: true))
        await #expect(throws: TransportFailure.self) { try await unreachable.sync() }
        let status = await unreachable.currentStatus
        #expect(!status.paused && status.nextAttempt != nil, "tried again later, like any failed round")
    }
}
