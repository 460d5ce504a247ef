import FerryBase

/// Lets a warning through at most once per interval and counts the ones held
/// back in between. While memcached is down every paged request meets the same
/// failure; an outage should be a line every few seconds, not an echo of the
/// traffic (a restart under load logged dozens of lines a second).
final class LogThrottle: Sendable {
    private let interval: Duration
    private let state = Locked<(last: ContinuousClock.Instant?, held: Int)>((nil, 0))

    init(interval: Duration = .seconds(5)) {
        self.interval = interval
    }

    /// How many lines were held back since the last one let through, when this
    /// one may be logged; nil when it is to be held back.
    func admit(now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { state in
            if let last = state.last, now - last < interval {
                state.held += 1
                return nil
            }
            let held = state.held
            state = (now, 0)
            return held
        }
    }
}
