import Foundation

/// What one round of sync (``SyncEngine/sync()``: schema, upload, download)
/// carries from step to step. It is made when the round starts and dropped
/// when it ends, so nothing of one round leaks into the next; what does carry
/// over is ``SyncSchedule``.
struct SyncRound: Sendable, Equatable {
    /// Upload passes at most per round: a merged request is planned and sent
    /// again, but a row edited on two devices in a tight loop cannot hold a
    /// round forever.
    static let maxPasses = 6

    /// Upload passes begun so far.
    private(set) var passes = 0
    /// Rows refused in this pass because the create of a row they were made
    /// under was refused: nothing more of theirs is sent in the pass.
    var refused: Set<RowKey> = []
    /// Rows whose requests go alone from now on in this round: a bulk call
    /// named them when the server refused it.
    var solo: Set<RowKey> = []

    /// Starts an upload pass; false when the round has had its passes.
    mutating func beginPass() -> Bool {
        guard passes < Self.maxPasses else { return false }
        passes += 1
        refused = []
        return true
    }
}

/// What carries from one round to the next: how many rounds in a row failed
/// (the backoff's exponent), whether the last answer was a 401, and when the
/// next round is due. Pure, so a loop that runs rounds by itself decides when
/// from this value alone.
struct SyncSchedule: Sendable, Equatable {
    /// Rounds in a row that ended in an error.
    private(set) var failures = 0
    /// The last answer was a 401 (a second one in a row pauses sync).
    var lastUnauthorized = false
    /// When the next round is due after a failure; nil after a success.
    private(set) var nextAttempt: Date?

    /// A round finished.
    mutating func succeeded() {
        failures = 0
        nextAttempt = nil
    }

    /// A round failed with `error` at `now`: the server's `Retry-After` when it
    /// gave one, else the next backoff step. Returns when the next round is due.
    @discardableResult
    mutating func failed(_ error: any Error, policy: RetryPolicy, now: Date, random: () -> Double) -> Date {
        failures += 1
        let delay = (error as? ServerRefusedForNow)?.retryAfter ?? policy.backoff(attempt: failures - 1, random: random)
        let due = now.addingTimeInterval(delay)
        nextAttempt = due
        return due
    }
}
