// The feed hold's gauges at `GET /metrics`: written here and handed to
// FerryMetrics as a closure, because Metrics comes before Sync
// (docs/ARCHITECTURE.md, "One direction").

extension FerryMetrics {
    /// Asks `feedHold` at scrape time what holds the changes feed back.
    public func observe(feedHold: FeedHoldWatch) { observe { feedHold.writeGauges(to: &$0) } }
}

extension FeedHoldWatch {
    /// Whether the question could be asked, then what holds the feed back now, by kind
    /// (left out when it could not: a 0 would say that nothing holds it).
    func writeGauges(to text: inout PrometheusText) {
        let asked = Result(catching: { try current() })
        text.family(
            "ferry_feed_hold_known", type: .gauge,
            help:
                "1 when this scrape could ask PostgreSQL what holds the changes feed back; 0 when it could not (PostgreSQL down, frozen past 2 s, or no pooled connection free within the acquire timeout), and the two ferry_feed_held gauges are left out."
        )
        guard case .success(let hold) = asked else {
            text.sample("ferry_feed_hold_known", value: 0)
            return
        }
        text.sample("ferry_feed_hold_known", value: 1)
        text.family(
            "ferry_feed_held_seconds", type: .gauge,
            help:
                "How long the transaction holding the changes feed back now has held it, by its kind; 0 for the other kinds and when nothing holds it."
        )
        for kind in FeedHoldWatch.kinds {
            text.sample("ferry_feed_held_seconds", labels: [("kind", kind)], value: hold?.kind == kind ? hold?.seconds ?? 0 : 0)
        }
        text.family("ferry_feed_hold_over_limit", type: .gauge, help: "1 while the feed is held longer than live.max_feed_hold_seconds.")
        text.sample("ferry_feed_hold_over_limit", value: (hold?.seconds ?? 0) > limitSeconds ? 1 : 0)
    }
}
