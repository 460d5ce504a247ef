import Foundation

/// What continuous mode (``SyncEngine/start(uploadDelay:longPollWait:)``)
/// does next, decided from values alone: the engine's loop tells it what
/// happened (a local write, the network back, a round's or a long poll's
/// outcome) and asks ``next(now:)``. No I/O and no clock of its own, so
/// `LivePlanTests` drives every path with fixed dates.
struct LivePlan: Sendable, Equatable {
    /// The loop's next step.
    enum Step: Sendable, Equatable {
        /// A full round now: the upload, then the feed followed to its end.
        case round
        /// Wait until `until` (nil: until something happens), holding a long
        /// poll open when `listening`; a local write, the network coming back,
        /// a `sync()` or the poll's answer end the wait early.
        case wait(until: Date?, listening: Bool)
        /// An unsubscribed stream's TTL ended: evict now (no network; a long
        /// poll open stays open).
        case evict
        /// `stop()` was called.
        case end
    }

    /// Coalesces the writes of this many seconds after the first into one upload.
    let uploadDelay: TimeInterval
    /// An empty long-poll answer that comes sooner than this after it was
    /// asked is a server that does not hold requests (an old one, or one
    /// shutting down): the next poll waits this long, so a loop never spins.
    static let quickAnswer: TimeInterval = 1

    /// When the next round is due; nil when none is wanted.
    private(set) var roundDue: Date?
    /// After a failure: nothing goes to the server before this, unless the
    /// network comes back or the app asks for a sync.
    private(set) var backoffUntil: Date?
    /// Two 401s in a row: nothing is sent until the app asks (``SyncEngine/sync()``,
    /// ``SyncEngine/networkBecameAvailable()``), having signed in again.
    private(set) var paused = false
    /// No long poll before this (after a quick empty answer).
    private(set) var quietUntil: Date?
    /// When the next eviction is due (``SubscriptionRules/nextEviction(_:now:)``);
    /// nil: no TTL runs. Every wait ends by then, whatever else it waits for.
    private(set) var evictionDue: Date?
    private(set) var ended = false

    /// A plan that starts with a round at `now`.
    init(uploadDelay: TimeInterval, now: Date) {
        self.uploadDelay = max(0, uploadDelay)
        roundDue = now
    }

    // MARK: What happened

    /// The app wrote: a round within ``uploadDelay`` (or when a backoff ends).
    mutating func wrote(now: Date) {
        let due = now.addingTimeInterval(uploadDelay)
        roundDue = min(roundDue ?? due, due)
    }

    /// The network came back, or the app asked for a sync: a round at once,
    /// whatever backoff or pause was under way.
    mutating func askedNow(now: Date) {
        backoffUntil = nil
        quietUntil = nil
        paused = false
        roundDue = now
    }

    mutating func stopped() { ended = true }

    /// The next eviction is due at `due` (nil: none), as the store says after a
    /// round, an eviction or an unsubscribe.
    mutating func evictions(due: Date?) { evictionDue = due }

    /// A round finished: listen from its cursor.
    mutating func roundSucceeded() {
        backoffUntil = nil
        roundDue = nil
    }

    /// A round or a long poll failed; `due` is the retry table's time for the
    /// next try (nil: sync is paused until the app signs in again). Then a
    /// whole round: it uploads what waited and catches up before listening.
    mutating func failed(retryAt due: Date?) {
        guard let due else {
            paused = true
            roundDue = nil
            return
        }
        backoffUntil = due
        roundDue = due
    }

    /// The long poll answered (with changes or after its wait), `elapsed`
    /// seconds after it was sent.
    mutating func pollAnswered(empty: Bool, elapsed: TimeInterval, now: Date) {
        backoffUntil = nil
        quietUntil = empty && elapsed < Self.quickAnswer ? now.addingTimeInterval(Self.quickAnswer - elapsed) : nil
    }

    // MARK: What next

    func next(now: Date) -> Step {
        if ended { return .end }
        // Evictions need no network: due even while paused or backing off.
        if let evictionDue, evictionDue <= now { return .evict }
        if paused { return .wait(until: evictionDue, listening: false) }
        if let backoffUntil, backoffUntil > now { return .wait(until: earliest(backoffUntil, evictionDue), listening: false) }
        if let roundDue, roundDue <= now { return .round }
        if let quietUntil, quietUntil > now {
            return .wait(until: earliest(min(quietUntil, roundDue ?? quietUntil), evictionDue), listening: false)
        }
        return .wait(until: earliest(roundDue, evictionDue), listening: true)
    }

    private func earliest(_ a: Date?, _ b: Date?) -> Date? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }
}
