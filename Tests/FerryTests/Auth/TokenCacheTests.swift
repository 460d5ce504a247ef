@testable import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The in-process cache of checked tokens on its own, then over HTTP: what it
/// spares (the lookup) and what it must never spare (a revocation through this
/// process, an expiry, a revocation elsewhere once its lifetime has passed).
@Suite struct TokenCacheTests {
    private let user = "4394aa78-5309-466c-9cb0-380e236ff8b3"
    private let farFuture = Int64(4_000_000_000_000)

    @Test func zeroSecondsIsNoCache() {
        #expect(TokenCache(seconds: 0) == nil)
        #expect(TokenCache(seconds: 1) != nil)
    }

    @Test func aCheckStandsForItsLifetimeAndNoLonger() throws {
        let cache = try #require(TokenCache(seconds: 2))
        let start = ContinuousClock.now
        cache.store("h", userID: user, expiresAtMs: farFuture, generation: cache.generation, now: start)
        #expect(cache.user(for: "h", now: start) == user)
        #expect(cache.user(for: "h", now: start + .milliseconds(1_999)) == user)
        #expect(cache.user(for: "h", now: start + .seconds(2)) == nil)
        #expect(cache.count == 0, "a lapsed check is dropped")
        #expect(cache.user(for: "other", now: start) == nil)
    }

    @Test func anExpiredTokenIsRefusedWhateverTheCacheHolds() throws {
        let cache = try #require(TokenCache(seconds: 60))
        let now = TokenCache.wallClockMs()
        cache.store("h", userID: user, expiresAtMs: now + 1_000, generation: cache.generation)
        #expect(cache.user(for: "h", nowMs: now + 999) == user)
        #expect(cache.user(for: "h", nowMs: now + 1_000) == nil)
    }

    @Test func aCheckThatRanAcrossAnEvictionIsNotKept() throws {
        let cache = try #require(TokenCache(seconds: 60))
        let before = cache.generation
        cache.evict("revoked meanwhile")
        cache.store("h", userID: user, expiresAtMs: farFuture, generation: before)
        #expect(cache.user(for: "h") == nil)
        cache.store("h", userID: user, expiresAtMs: farFuture, generation: cache.generation)
        #expect(cache.user(for: "h") == user)
        cache.evict("h")
        #expect(cache.user(for: "h") == nil)
    }

    @Test func itHoldsAtMostItsCapacity() throws {
        let cache = try #require(TokenCache(seconds: 60, capacity: 3))
        for index in 0..<10 {
            cache.store("h\(index)", userID: user, expiresAtMs: farFuture, generation: cache.generation)
            #expect(cache.count <= 3)
            #expect(cache.user(for: "h\(index)") == user, "the newest check is kept")
        }
    }

    @Test func tokensNotUsedAgainLeaveWithinALifetimeOrTwo() throws {
        let cache = try #require(TokenCache(seconds: 1))
        let start = ContinuousClock.now
        for index in 0..<500 {
            cache.store("old \(index)", userID: user, expiresAtMs: farFuture, generation: cache.generation, now: start)
        }
        #expect(cache.count == 500)
        // New users come and go; the first ones are never looked up again.
        for step in 1...4 {
            cache.store(
                "new \(step)", userID: user, expiresAtMs: farFuture, generation: cache.generation,
                now: start + .milliseconds(600 * step))
        }
        #expect(cache.count <= 3, "only the last moments' tokens stay, not every token ever checked (\(cache.count))")
        #expect(cache.user(for: "new 4", now: start + .milliseconds(2_400)) == user)
    }

    @Test func theCheckTextReadsAsUserAndExpiry() {
        #expect(CheckedToken("\(user) 1797897648455") == CheckedToken(userID: user, expiresAtMs: 1_797_897_648_455))
        for bad in ["", user, "\(user) ", "\(user) soon", " 1797897648455", "\(user) 12 13"] {
            #expect(CheckedToken(bad) == nil, "\(bad)")
        }
    }

    // MARK: Over HTTP

    private func me(_ server: TestServer, _ token: String) throws -> Int {
        try server.client().request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(token)")]).status
    }

    /// A server whose cache keeps checks for `seconds`, and a token it has just checked
    /// (`prepare` runs as the owner before that first use).
    private func checkedToken(cacheSeconds seconds: Int, prepare: String? = nil) throws -> (TestServer, String) {
        let server = try TestServer { $0.auth.tokenCacheSeconds = seconds }
        do {
            let token = try server.user("carol").token
            if let prepare { _ = try server.ownerQuery(prepare) }
            #expect(try me(server, token) == 200)
            return (server, token)
        } catch {
            server.stop()
            throw error
        }
    }

    @Test func aRevocationThroughThisProcessTakesEffectAtOnce() throws {
        let (server, token) = try checkedToken(cacheSeconds: 60)
        defer { server.stop() }
        // Revoked by hand: this process keeps trusting its check, as documented…
        _ = try server.ownerQuery("UPDATE ferry.tokens SET revoked = true")
        #expect(try me(server, token) == 200, "the cache is in use")
        // …but a revocation through the API evicts it.
        let erin = try server.user("erin").token
        #expect(try me(server, erin) == 200)
        #expect(try server.client().request("DELETE", "/v1/auth/token", headers: [("Authorization", "Bearer \(erin)")]).status == 204)
        #expect(try me(server, erin) == 401)
    }

    @Test func aRevocationElsewhereTakesEffectWithinTheLifetime() throws {
        let (server, token) = try checkedToken(cacheSeconds: 1)
        defer { server.stop() }
        _ = try server.ownerQuery("UPDATE ferry.tokens SET revoked = true")
        let revoked = ContinuousClock.now
        let status = try waitFor("the revoked token to be refused", within: 5) {
            let status = try me(server, token)
            return status == 200 ? nil : status
        }
        #expect(status == 401)
        // The lifetime, plus slack for a busy test machine.
        #expect(ContinuousClock.now - revoked < .milliseconds(2_500))
    }

    @Test func aCachedTokenStillExpiresOnTime() throws {
        // Checked (and cached for a minute) while it has three seconds left.
        let (server, token) = try checkedToken(
            cacheSeconds: 60, prepare: "UPDATE ferry.tokens SET expires_at = now() + interval '3 seconds'")
        defer { server.stop() }
        let expiry = try #require(
            server.ownerQuery(
                "SELECT floor(extract(epoch FROM expires_at) * 1000)::bigint FROM ferry.tokens"
            ).first?[0].flatMap { Int64($0) })
        let wait = expiry + 200 - TokenCache.wallClockMs()
        // A real sleep: the clock must pass the token's expiry, which is what the test checks.
        if wait > 0 { Thread.sleep(forTimeInterval: Double(wait) / 1000) }
        #expect(try me(server, token) == 401)
    }

    @Test func withoutTheCacheEveryRequestLooksItsTokenUp() throws {
        let (server, token) = try checkedToken(cacheSeconds: 0)
        defer { server.stop() }
        _ = try server.ownerQuery("UPDATE ferry.tokens SET revoked = true")
        #expect(try me(server, token) == 401)
    }
}
