import FerryBase
import FerryHTTP

/// When each of Ferry's own tokens was last used, for the console's token list
/// (`ferry.tokens.last_used_at`, core migration 0027); and, keyed by user id,
/// when each JWT user last made a request (`ferry.users.last_used_at`, core 0029).
///
/// Kept off the request's path: a token check that found the token live notes
/// the moment here (one dictionary write under a lock), and a background flush
/// at most every ``flushDelay`` writes the notes in one statement,
/// `ferry.record_token_uses`. A token trusted from ``TokenCache`` is not
/// noted again, so the time is exact to within `auth.token_cache_seconds`
/// plus the flush delay (a JWT user is noted on every request, cached or not,
/// since a verified JWT stays cached until it expires). Past ``capacity`` distinct tokens between flushes,
/// new ones are not noted until the next flush: the log is a convenience
/// for operators, never a load.
final class TokenUseLog: Sendable {
    /// The longest a use waits to be written.
    static let flushDelayMs = 2_000
    /// Most distinct tokens held between flushes.
    static let capacity = 10_000

    private struct State {
        var uses: [String: Int64] = [:]
        var scheduled = false
    }

    private let state = Locked(State())
    /// The member naming what was used in ``take()``'s entries: `hash` (a token's) or `user` (an id).
    private let key: String

    init(key: String = "hash") {
        self.key = key
    }

    /// Notes that `hash` was used at `atMs`; true when the caller must schedule a flush.
    func note(_ hash: String, atMs: Int64 = TokenCache.wallClockMs()) -> Bool {
        state.withLock { state in
            guard state.uses[hash] != nil || state.uses.count < Self.capacity else { return false }
            state.uses[hash] = atMs
            defer { state.scheduled = true }
            return !state.scheduled
        }
    }

    /// Takes what was noted, for a flush: `[{"hash" (or ``key``), "at"}]` as JSON text, nil when nothing was.
    func take() -> String? {
        let uses = state.withLock { state in
            defer {
                state.uses = [:]
                state.scheduled = false
            }
            return state.uses
        }
        guard !uses.isEmpty else { return nil }
        let entries = uses.map { JSONValue.object([(key, .string($0.key)), ("at", .int(Int($0.value)))]) }
        return String(decoding: JSONValue.array(entries).bytes, as: UTF8.self)
    }
}
