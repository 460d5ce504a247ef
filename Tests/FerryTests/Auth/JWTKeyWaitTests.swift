@testable import Ferry
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// Issue 51, item 1: a request whose JWT names a `kid` its provider does not
/// hold waits, parked (no worker, no pool connection), for the one fetch
/// that runs for it, bounded (``UnknownKeyWait``), and is resumed once.
@Suite struct JWTKeyWaitTests {
    /// One request on a thread of its own: its answer (nil: the connection
    /// closed without one) and how long it took, once it is done.
    final class Pending: Sendable {
        private let state = Locked<(answer: TestHTTPClient.Response?, seconds: Double)?>(nil)

        init(_ call: @escaping @Sendable () -> TestHTTPClient.Response?) {
            let thread = Thread { [state] in
                let started = ContinuousClock.now
                let answer = call()
                let elapsed = ContinuousClock.now - started
                state.withLock { $0 = (answer, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) }
                state.broadcast()
            }
            thread.start()
        }

        /// The answer and its time, waiting up to `seconds` for it.
        func result(within seconds: Double = 120) -> (answer: TestHTTPClient.Response?, seconds: Double)? {
            state.withLockWaiting(until: LockDeadline(after: .milliseconds(Int(seconds * 1000)))) { state, wake in
                if let done = state { return .some(done) }
                return wake == .timedOut ? .some(nil) : nil
            }
        }
    }

    /// A rotation: the provider publishes a new key, and the first requests
    /// with tokens it signed wait for the one fetch they start and are served,
    /// 200, with no 503 at all. (Before, each got 503 `jwks_unavailable` with
    /// `Retry-After: 1` and had to retry.)
    @Test func aNewKidWaitsForItsFetchAndIsServed() throws {
        let fixture = try JWTFixture { $0.auth.jwksMinRefetchSeconds = 0 }
        defer { fixture.stop() }
        let idp = fixture.idp
        #expect(idp.fetches == 1)
        try idp.rotate(kid: "rsa-2", replacing: true)
        let first = try fixture.call("GET", "/v1/auth/me", token: idp.token(subject: "first", kid: "rsa-2"))
        #expect(first.status == 200, "\(first.status) \(first.text)")
        #expect(idp.fetches == 2, "one fetch for the new kid, got \(idp.fetches)")
        // Several at once, with another new key: one fetch, and every one served.
        try idp.rotate(kid: "rsa-3")
        let tokens = (0..<8).map { idp.token(subject: "user\($0)", kid: "rsa-3") }
        let pending = tokens.map { token in Pending { try? fixture.call("GET", "/v1/auth/me", token: token) } }
        for request in pending {
            let answer = request.result()?.answer
            #expect(answer?.status == 200, "\(answer?.status ?? 0) \(answer?.text ?? "no answer")")
        }
        #expect(idp.fetches == 3, "one fetch for eight requests, got \(idp.fetches)")
        #expect(fixture.verifier.waiting(issuer: idp.issuer) == 0)
    }

    /// A provider that fails: the waiting request is woken when the fetch
    /// fails, and answered by what the keys then say (here, a `kid` the
    /// current key set does not hold: 401), long before the bound.
    @Test func aFailedFetchWakesItsWaiters() throws {
        let fixture = try JWTFixture { $0.auth.jwksMinRefetchSeconds = 30 }
        defer { fixture.stop() }
        let idp = fixture.idp
        idp.setDown(true)
        let ghost = try idp.unpublishedKey(kid: "ghost")
        let started = ContinuousClock.now
        let answer = try fixture.call("GET", "/v1/auth/me", token: idp.sign(claims: idp.claims(subject: "g"), with: ghost))
        #expect(answer.object["code"] as? String == "token_unknown_key", "\(answer.text)")
        #expect(ContinuousClock.now - started < .seconds(JWTVerifier.longestKeyWait), "woken by the failed fetch, not the bound")
        #expect(idp.fetches == 2)
    }

    /// The provider hangs: unknown-kid requests wait parked, holding no
    /// worker (with four workers and forty parked, cached tokens are served at
    /// once), and are answered 503 `jwks_unavailable` once the bound has
    /// passed, while the fetch still hangs, each resumed once and never parked again.
    @Test func whileTheFetchHangsWaitersHoldNoWorkerAndGetA503AfterTheBound() throws {
        let workers = 4
        // The fetch hangs throughout (600 s), unless the test releases it.
        let (fixture, ferryToken, cachedJWT) = try JWTFixture.forHangingFetch(workers: workers)
        defer { fixture.stop() }
        let idp = fixture.idp
        idp.setHanging(true)
        defer { idp.setHanging(false) }
        let ghost = try idp.unpublishedKey(kid: "ghost")
        let count = 10 * workers
        let pending = (0..<count).map { index in
            let token = idp.sign(claims: idp.claims(subject: "waiter\(index)"), with: ghost)
            return Pending { try? fixture.call("GET", "/v1/auth/me", token: token) }
        }
        #expect(eventually(within: 60) { fixture.verifier.waiting(issuer: idp.issuer) == count }, "not all parked")
        // Every worker's worth ten times over is parked: a cached JWT and a Ferry token are served meanwhile.
        for _ in 0..<5 {
            #expect(try fixture.call("GET", "/v1/auth/me", token: cachedJWT).status == 200)
            #expect(try fixture.call("GET", "/v1/auth/me", token: ferryToken).status == 200)
        }
        #expect(fixture.verifier.waiting(issuer: idp.issuer) == count, "the waiters stayed parked while those were served")
        #expect(idp.hangingFetches == 1)
        let bound = JWTVerifier.longestKeyWait
        for request in pending {
            let result = request.result()
            let answer = result?.answer
            #expect(answer?.status == 503 && answer?.object["code"] as? String == "jwks_unavailable", "\(answer?.text ?? "no answer")")
            #expect(answer?.header("Retry-After") == "1")
            let seconds = result?.seconds ?? 0
            // Resumed at the bound, once: a second park would end a bound later.
            #expect(seconds >= bound - 0.01 && seconds < 2 * bound, "answered after \(seconds) s")
        }
        #expect(fixture.verifier.waiting(issuer: idp.issuer) == 0)
        #expect(idp.fetches == 2, "the start's fetch and one for all the waiters, got \(idp.fetches)")
        #expect(fixture.verifier.finishedFetches(issuer: idp.issuer) < fixture.verifier.fetches(issuer: idp.issuer), "the fetch still hangs")
    }

    /// Shutdown while requests wait: each is answered 503 `jwks_unavailable`
    /// at once (or its connection closed), and the server stops without
    /// waiting for the bound or the hanging fetch.
    @Test func shutdownAnswersTheWaiters() throws {
        let fixture = try JWTFixture { config in
            config.auth.jwksFetchTimeoutSeconds = 600
            config.auth.jwksMinRefetchSeconds = 600
        }
        let idp = fixture.idp
        idp.setHanging(true)
        let ghost = try idp.unpublishedKey(kid: "ghost")
        let pending = (0..<3).map { index in
            let token = idp.sign(claims: idp.claims(subject: "waiter\(index)"), with: ghost)
            return Pending { try? fixture.call("GET", "/v1/auth/me", token: token) }
        }
        #expect(eventually(within: 60) { fixture.verifier.waiting(issuer: idp.issuer) == 3 }, "not all parked")
        let started = ContinuousClock.now
        fixture.server.stop()
        let stopping = ContinuousClock.now - started
        for request in pending {
            let result = request.result()
            #expect(result != nil, "never ended")
            if let answer = result?.answer {
                #expect(answer.status == 503 && answer.object["code"] as? String == "jwks_unavailable", "\(answer.text)")
            }
            #expect((result?.seconds ?? .infinity) < JWTVerifier.longestKeyWait, "ended by the bound, not the shutdown")
        }
        #expect(stopping < .seconds(JWTVerifier.longestKeyWait), "the shutdown waited \(stopping)")
        #expect(fixture.verifier.waiting(issuer: idp.issuer) == 0)
        idp.setHanging(false)
        idp.stop()
    }
}
