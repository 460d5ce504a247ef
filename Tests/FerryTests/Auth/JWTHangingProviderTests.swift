@testable import Ferry
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Logging
import Testing

/// Issue 51: a provider whose JWKS endpoint accepts the connection and never
/// answers. A flood of tokens naming unknown `kid`s (what anyone can make)
/// must not hold workers: cached JWTs and Ferry's own tokens go on being
/// served while the one fetch hangs.
@Suite struct JWTHangingProviderTests {
    /// The median of `samples`.
    static func median(_ samples: [Double]) -> Double {
        let sorted = samples.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// `count` sequential calls of each token, alternating; their durations in seconds, and their statuses.
    static func measure(_ fixture: JWTFixture, tokens: [String], count: Int) throws -> (durations: [[Double]], statuses: Set<Int>) {
        var durations = Array(repeating: [Double](), count: tokens.count)
        var statuses = Set<Int>()
        for _ in 0..<count {
            for (index, token) in tokens.enumerated() {
                let started = ContinuousClock.now
                statuses.insert(try fixture.call("GET", "/v1/auth/me", token: token).status)
                let elapsed = ContinuousClock.now - started
                durations[index].append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
        }
        return (durations, statuses)
    }

    @Test func aBurstOfUnknownKidsWhileTheJWKSHangsHoldsNoWorker() throws {
        let workers = 4
        let fixture = try JWTFixture { config in
            config.listen.workerThreads = workers
            // Longer than the test: the fetch hangs throughout, unless the test releases it.
            config.auth.jwksFetchTimeoutSeconds = 120
            config.auth.jwksMinRefetchSeconds = 30
        }
        defer { fixture.stop() }
        let idp = fixture.idp
        let ferryToken = try fixture.server.user("local").token
        let cachedJWT = idp.token(subject: "cached")
        #expect(try fixture.call("GET", "/v1/auth/me", token: cachedJWT).status == 200)
        let tokens = [cachedJWT, ferryToken]
        let before = try Self.measure(fixture, tokens: tokens, count: 15)
        #expect(before.statuses == [200])

        idp.setHanging(true)
        let ghost = try idp.unpublishedKey(kid: "ghost")
        let stop = Locked(false)
        let answers = Locked([String: Int]())
        let burst = DispatchGroup()
        for index in 0..<(10 * workers) {
            let token = idp.sign(claims: idp.claims(subject: "flood\(index)"), with: ghost)
            DispatchQueue.global().async(group: burst) {
                while !stop.withLock({ $0 }) {
                    let answer = try? fixture.call("GET", "/v1/auth/me", token: token)
                    let key = "\(answer?.status ?? 0) \(answer?.object["code"] as? String ?? "-") \(answer?.header("Retry-After") ?? "-")"
                    answers.withLock { $0[key, default: 0] += 1 }
                }
            }
        }
        // The flood's first token started the one fetch, which now hangs at the provider.
        #expect(eventually(within: 60) { idp.hangingFetches == 1 }, "the fetch never reached the provider")
        let during = try Self.measure(fixture, tokens: tokens, count: 15)
        // Every request above completed while the fetch still hung.
        let stillHanging =
            idp.hangingFetches == 1 && fixture.verifier.finishedFetches(issuer: idp.issuer) < fixture.verifier.fetches(issuer: idp.issuer)
        stop.withLock { $0 = true }
        burst.wait()
        #expect(during.statuses == [200], "\(during.statuses)")
        #expect(stillHanging, "the cached JWT's and the Ferry token's requests were answered while the JWKS fetch hung")
        let flood = answers.withLock { $0 }
        #expect(flood.keys.sorted() == ["503 jwks_unavailable 1"], "\(flood)")
        #expect((flood.values.reduce(0, +)) >= 10 * workers)
        #expect(idp.fetches == 2, "the start's fetch and one for the flood: single flight, got \(idp.fetches)")
        for (index, name) in ["cached JWT", "Ferry token"].enumerated() {
            let base = Self.median(before.durations[index]), loaded = Self.median(during.durations[index])
            print("\(name): median \(Int(base * 1e6)) µs alone, \(Int(loaded * 1e6)) µs under the flood")
            // Generous: what a held worker costs here is the fetch timeout, 120 s.
            #expect(loaded <= 2 * base + 1.0, "\(name): median \(loaded) s under the flood, \(base) s without")
        }
        // Released, the fetch ends; the flood's kid is still unknown, now a 401.
        idp.setHanging(false)
        fixture.waitForFetches(issuer: idp.issuer)
        let after = try fixture.call("GET", "/v1/auth/me", token: idp.sign(claims: idp.claims(subject: "late"), with: ghost))
        #expect(after.object["code"] as? String == "token_unknown_key", "\(after.text)")
    }

    /// Start-up fetches every provider's keys at once, bounded by one fetch
    /// timeout: three hanging providers delay it by one timeout, not three.
    @Test func startUpFetchesEveryProviderAtOnce() throws {
        let idps = try (0..<3).map { _ in try TestIdentityProvider() }
        defer { for idp in idps { idp.stop() } }
        for idp in idps { idp.setHanging(true) }
        let timeout = 3
        let started = ContinuousClock.now
        let verifier = try JWTVerifier(
            providers: idps.map(JWTFixture.provider),
            timing: KeyTiming(refresh: .seconds(600), grace: .seconds(600), minRefetch: .seconds(30), fetchTimeout: .seconds(timeout)),
            leewaySeconds: 60, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        defer { verifier.stop() }
        let elapsed = ContinuousClock.now - started
        // One after the other, each fetch would end only by its timeout: at least 3 × 3 s.
        #expect(elapsed < .seconds(3 * timeout - 1), "start-up took \(elapsed)")
        for idp in idps { #expect(idp.fetches == 1) }
        // A token of a provider still hanging is answered at once, 503.
        #expect(throws: Problem.self) { try verifier.verify(idps[0].token(subject: "a"), now: Date().timeIntervalSince1970) }
    }
}
