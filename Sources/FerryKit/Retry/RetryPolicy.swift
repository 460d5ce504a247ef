import Foundation

/// What to do after one attempt to send an upload: FerryKit's one retry table
/// (docs/FERRYKIT.md, "Retries").
///
/// | answer | step |
/// |---|---|
/// | network error, timeout, 5xx, 429 | back off: random in [0, min(cap, base * 2^attempt)] (full jitter); `Retry-After` wins |
/// | 401 | a new token from the engine's ``TokenProvider``, then retry once; a second 401 in a row pauses sync |
/// | 409 `idempotency_key_in_use` | the same request is still running on the server: wait as for a 503, then send again with the same key |
/// | 409, 412 | merge with the server's `current`, then send again |
/// | 410 on a row | apply the tombstone; pending edits of the row are rejected |
/// | other 4xx | the operation is rejected, with its problem; the rest goes on |
/// | 2xx (replayed or not) | success |
public struct RetryPolicy: Sendable {
    /// The outcome of one attempt.
    public enum Outcome: Sendable, Equatable {
        /// No answer: the connection failed, timed out, or was cut.
        case transportFailure
        /// An HTTP answer, with its `Retry-After` in seconds when it had one
        /// and its problem+json `code` when it had one.
        case status(Int, retryAfter: Double?, code: String? = nil)
    }

    /// The step after an outcome.
    public enum Step: Sendable, Equatable {
        case success
        /// Try again after this many seconds.
        case retry(after: Double)
        /// Ask the token provider for a new token, then retry.
        case refreshToken
        /// Stop syncing until the app signs in again.
        case pause
        /// Merge with the server's version, then send again.
        case merge
        /// The row is gone on the server.
        case tombstone
        /// The server refused the operation for good.
        case reject
    }

    /// The first backoff ceiling, in seconds.
    public var base: Double = 0.5
    /// The largest backoff, in seconds.
    public var cap: Double = 60

    public init(base: Double = 0.5, cap: Double = 60) { (self.base, self.cap) = (base, cap) }

    /// The step after `outcome` on attempt `attempt` (0 for the first), given
    /// whether the previous attempt was already a 401; `random` draws from [0, 1).
    public func step(
        after outcome: Outcome, attempt: Int, previousWasUnauthorized: Bool = false,
        random: () -> Double = { Double.random(in: 0..<1) }
    ) -> Step {
        switch outcome {
        case .transportFailure:
            return .retry(after: backoff(attempt: attempt, random: random))
        case .status(let status, let retryAfter, let code):
            switch status {
            case 200..<300: return .success
            case 401: return previousWasUnauthorized ? .pause : .refreshToken
            case 409 where code == "idempotency_key_in_use":
                // An earlier send of this request (its answer lost, or the app
                // killed while it waited) is still running: its outcome will be
                // this key's, replayed. Merging would drop the write: the answer
                // has no `current`.
                if let retryAfter, retryAfter >= 0 { return .retry(after: min(retryAfter, cap * 10)) }
                return .retry(after: backoff(attempt: attempt, random: random))
            case 409, 412: return .merge
            case 410: return .tombstone
            case 429, 500..<600:
                if let retryAfter, retryAfter >= 0 { return .retry(after: min(retryAfter, cap * 10)) }
                return .retry(after: backoff(attempt: attempt, random: random))
            case 400..<500: return .reject
            default: return .reject
            }
        }
    }

    /// Full jitter: uniform in [0, min(cap, base * 2^attempt)].
    public func backoff(attempt: Int, random: () -> Double) -> Double {
        let ceiling = min(cap, base * pow(2, Double(min(attempt, 30))))
        return ceiling * random()
    }

    /// `Retry-After` in seconds: delta-seconds or an HTTP date.
    public static func retryAfter(_ value: String?, now: Date) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
