import FerryBase
import FerryHTTP

/// The console sessions this instance checked in PostgreSQL in the last ten minutes, so
/// that an operator already signed in keeps the Health page while PostgreSQL is down or
/// does not answer: the time the page matters most, and the one time Ferry cannot check
/// a console token.
///
/// Only the health route asks it, and only when PostgreSQL could not be asked
/// (``ConsoleRoutes/health(_:_:)``): that answer holds this process's own figures, the
/// same as `/metrics`, never user data. A session signed out on this instance is
/// forgotten at once; one revoked elsewhere while PostgreSQL is down is taken until
/// ``window`` after it was last checked here, or until it expires, whichever is first.
/// Keys are tokens' SHA-256 hashes, as `ferry.operator_tokens` keeps them.
final class ConsoleRecentSessions: Sendable {
    /// Seconds a check in PostgreSQL stands in for one it cannot make.
    static let window: Double = 600
    /// At most this many sessions are remembered (the least recently checked go first).
    static let capacity = 64

    private struct Entry {
        let session: OperatorSession
        let checkedAt: Double
    }

    private let entries = Locked<[String: Entry]>([:])

    /// Notes that PostgreSQL just found `session` for the token hash `hash`.
    func remember(_ hash: String, _ session: OperatorSession) {
        let now = MonotonicClock.now()
        entries.withLock { entries in
            entries[hash] = Entry(session: session, checkedAt: now)
            if entries.count > Self.capacity, let oldest = entries.min(by: { $0.value.checkedAt < $1.value.checkedAt }) {
                entries[oldest.key] = nil
            }
        }
    }

    /// Forgets `hash` (its operator signed out here).
    func forget(_ hash: String) {
        entries.withLock { $0[hash] = nil }
    }

    /// The session of `hash` if PostgreSQL found it within ``window`` and it has not
    /// expired since; nil otherwise.
    func recent(_ hash: String, wallClockMs: Int64 = TokenCache.wallClockMs()) -> OperatorSession? {
        let now = MonotonicClock.now()
        return entries.withLock { entries in
            guard let entry = entries[hash] else { return nil }
            guard now - entry.checkedAt <= Self.window, entry.session.expiresAt > wallClockMs else {
                entries[hash] = nil
                return nil
            }
            return entry.session
        }
    }
}
