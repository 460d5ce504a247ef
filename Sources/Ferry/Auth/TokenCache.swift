import FerryBase
import Glibc

/// Tokens this process checked against the database within the last
/// `auth.token_cache_seconds`, by hash, with the user each one names and when it
/// expires.
///
/// A request whose token is here starts its pipeline with `set_config` alone
/// instead of the token lookup (`PostgresGateway.asCaller`): the lookup was a large
/// share of PostgreSQL's CPU in a GET by id. What that costs: a token revoked
/// anywhere but through this process (`DELETE /v1/auth/token` on another
/// instance, SQL by hand, a deleted user) is still accepted here for up to the
/// cache's lifetime. A revocation through this process is evicted at once, and
/// an expired token is refused at its expiry whatever the cache holds.
///
/// Only successful checks are stored, so a wrong token always reaches the
/// database (and its throttling). Keys are token hashes: the process never keeps
/// a token itself.
///
/// Verified JWTs have a cache of their own (``PostgresGateway``), whose entries also
/// hold the token's claims and last until the token expires, or until its
/// key is withdrawn from the provider's key set or the key set passes its
/// grace, whichever comes first (issue 51). There the claims' bytes are
/// bounded too.
final class TokenCache: Sendable {
    /// One checked token.
    struct Entry: Sendable {
        /// The user the token names (what `ferry.user_id` is set to).
        let userID: String
        /// When the token expires, in ms since the Unix epoch.
        let expiresAtMs: Int64
        /// Until when this check stands in for the database's.
        let checkedUntil: ContinuousClock.Instant
        /// A JWT's claims, as JSON text (what `ferry.claims()` returns); nil for Ferry's tokens.
        var claims: String? = nil
        /// The key that verified a JWT (``VerifiedJWT/keyIdentity``); nil for Ferry's tokens.
        var key: String? = nil
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Bumped by every eviction, so that a check which began before a
        /// revocation through this process cannot store what it saw afterwards.
        var generation: UInt64 = 0
        /// When lapsed entries are next swept out.
        var nextSweep: ContinuousClock.Instant?
        /// The bytes of the claims held.
        var claimBytes = 0
    }

    private let state = Locked(State())
    /// How long a check stands in for the database's.
    let lifetime: Duration
    /// At most this many tokens are held; past it, lapsed entries go and, if
    /// that is not enough, all of them (the next check of each refills it).
    let capacity: Int
    /// At most this many bytes of claims are held, treated like ``capacity``.
    let maxClaimBytes: Int

    /// A cache whose checks stand for `seconds`; nil for 0, which disables it.
    init?(seconds: Int, capacity: Int = 100_000, maxClaimBytes: Int = 64 << 20) {
        guard seconds > 0 else { return nil }
        lifetime = .seconds(seconds)
        self.capacity = max(1, capacity)
        self.maxClaimBytes = maxClaimBytes
    }

    /// The user `hash` was checked for, while the check is recent and the token unexpired.
    func user(for hash: String, now: ContinuousClock.Instant = .now, nowMs: Int64 = TokenCache.wallClockMs()) -> String? {
        entry(for: hash, now: now, nowMs: nowMs)?.userID
    }

    /// What `hash` was checked for, while the check is recent and the token unexpired.
    func entry(for hash: String, now: ContinuousClock.Instant = .now, nowMs: Int64 = TokenCache.wallClockMs()) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[hash] else { return nil }
            guard now < entry.checkedUntil, nowMs < entry.expiresAtMs else {
                state.claimBytes -= entry.claims?.utf8.count ?? 0
                state.entries[hash] = nil
                return nil
            }
            return entry
        }
    }

    /// The eviction count; read it before sending a check whose result ``store`` may keep.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Keeps a successful check, unless a token was evicted since `generation` was read.
    func store(
        _ hash: String, userID: String, expiresAtMs: Int64, claims: String? = nil, key: String? = nil, generation: UInt64,
        now: ContinuousClock.Instant = .now, until: ContinuousClock.Instant? = nil
    ) {
        let checkedUntil = until.map { min($0, now + lifetime) } ?? now + lifetime
        let entry = Entry(userID: userID, expiresAtMs: expiresAtMs, checkedUntil: checkedUntil, claims: claims, key: key)
        let bytes = claims?.utf8.count ?? 0
        state.withLock { state in
            guard state.generation == generation else { return }
            // A token not used again (its app signed out, its user moved on)
            // would otherwise stay until the cache filled: sweep lapsed
            // entries once per lifetime, so the cache holds the tokens of the
            // last moments and memory follows the active users, not all users.
            if let next = state.nextSweep, now >= next {
                Self.sweep(&state, now: now)
                state.nextSweep = now + lifetime
            } else if state.nextSweep == nil {
                state.nextSweep = now + lifetime
            }
            let full = state.entries.count >= capacity || state.claimBytes + bytes > maxClaimBytes
            if full, state.entries[hash] == nil {
                Self.sweep(&state, now: now)
                if state.entries.count >= capacity || state.claimBytes + bytes > maxClaimBytes {
                    state.entries.removeAll(keepingCapacity: true)
                    state.claimBytes = 0
                }
            }
            state.claimBytes += bytes - (state.entries[hash]?.claims?.utf8.count ?? 0)
            state.entries[hash] = entry
        }
    }

    /// Drops the entries whose check has lapsed.
    private static func sweep(_ state: inout State, now: ContinuousClock.Instant) {
        state.entries = state.entries.filter { now < $0.value.checkedUntil }
        state.claimBytes = state.entries.values.reduce(0) { $0 + ($1.claims?.utf8.count ?? 0) }
    }

    /// Forgets `hash` (its token was revoked through this process).
    func evict(_ hash: String) {
        state.withLock { state in
            state.claimBytes -= state.entries[hash]?.claims?.utf8.count ?? 0
            state.entries[hash] = nil
            state.generation &+= 1
        }
    }

    /// Forgets every JWT verified with one of `keys` (a fetch withdrew them),
    /// and keeps checks under way from storing what they verified before.
    func evict(keys: Set<String>) {
        state.withLock { state in
            state.entries = state.entries.filter { $0.value.key.map { !keys.contains($0) } ?? true }
            state.claimBytes = state.entries.values.reduce(0) { $0 + ($1.claims?.utf8.count ?? 0) }
            state.generation &+= 1
        }
    }

    /// Forgets every token of `userID` (an operator disabled the user or revoked
    /// all their tokens, here or on another instance), and keeps checks under
    /// way from storing what they saw before.
    func evict(userID: String) {
        state.withLock { state in
            state.entries = state.entries.filter { $0.value.userID != userID }
            state.claimBytes = state.entries.values.reduce(0) { $0 + ($1.claims?.utf8.count ?? 0) }
            state.generation &+= 1
        }
    }

    /// How many tokens are held (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    /// The wall clock in ms since the Unix epoch, the unit of a token's `expires_at`.
    static func wallClockMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec / 1_000_000)
    }
}
