// The live feed's gauges at `GET /metrics`: written here and handed to
// FerryMetrics as a closure, because Metrics comes before Sync
// (docs/ARCHITECTURE.md, "One direction").

extension FerryMetrics {
    /// Reads the live feed's waiters and its listener's state at scrape time.
    public func observe(live: LiveFeed) { observe { live.writeGauges(to: &$0) } }
}

extension LiveFeed {
    /// The waiters, the listener's state, and the hints and wakes so far.
    func writeGauges(to text: inout PrometheusText) {
        text.family("ferry_live_waiters", type: .gauge, help: "Long polls and event streams waiting now.")
        text.sample("ferry_live_waiters", value: waiters)
        text.family("ferry_live_listening", type: .gauge, help: "1 while the LISTEN connection is up; waiters check on a timer while it is 0.")
        text.sample("ferry_live_listening", value: isListening ? 1 : 0)
        text.family("ferry_live_listener_connects_total", type: .counter, help: "Times the LISTEN connection was established.")
        text.sample("ferry_live_listener_connects_total", value: listenerConnections)
        text.family(
            "ferry_live_hints_total", type: .counter, help: "Commit hints delivered to this instance's waiters (heard, or of its own commits).")
        text.sample("ferry_live_hints_total", value: hintsReceived)
        text.family(
            "ferry_live_hints_published_total", type: .counter, help: "Hints of this instance's own commits, collected instead of notified.")
        text.sample("ferry_live_hints_published_total", value: hintsPublished)
        text.family("ferry_live_hint_notifies_total", type: .counter, help: "NOTIFY transactions that carried them to the other instances.")
        text.sample("ferry_live_hint_notifies_total", value: hintNotifies)
        text.family(
            "ferry_live_hint_peers", type: .gauge,
            help: "Other instances' listeners at the last check before a send (-1 before the first); with none, nothing is sent.")
        text.sample("ferry_live_hint_peers", value: hintPeers)
        text.family(
            "ferry_live_hints_unsent_alone_total", type: .counter, help: "Hints of this instance's commits not sent: no other instance listened.")
        text.sample("ferry_live_hints_unsent_alone_total", value: hintsUnsentAlone)
        text.family("ferry_live_wakes_total", type: .counter, help: "Waiters woken to check the feed.")
        text.sample("ferry_live_wakes_total", value: wakes)
        text.family("ferry_live_checks_total", type: .counter, help: "Checks of the feed made by waiters.")
        text.sample("ferry_live_checks_total", value: checks)
        text.family(
            "ferry_live_shared_answers_total", type: .counter, help: "Waiters answered from another waiter's check, without a query of their own.")
        text.sample("ferry_live_shared_answers_total", value: sharedAnswers)
        text.family(
            "ferry_live_token_lookups_total", type: .counter,
            help: "Bulk lookups of waiting devices' tokens, which let them take another's check when the token cache lapsed.")
        text.sample("ferry_live_token_lookups_total", value: registry.tokenLookupCount.load(ordering: .relaxed))
        text.family("ferry_live_tokens_looked_up_total", type: .counter, help: "Tokens those lookups looked up.")
        text.sample("ferry_live_tokens_looked_up_total", value: registry.tokensLookedUpCount.load(ordering: .relaxed))
        text.family(
            "ferry_live_retries_total", type: .counter, help: "Woken waiters whose check met a passing failure (a 503), woken again a second later.")
        text.sample("ferry_live_retries_total", value: registry.retryCount.load(ordering: .relaxed))
        text.family(
            "ferry_live_holds_total", type: .counter,
            help: "Waiters whose check found changes an older running transaction holds back, so they waited for the frontier.")
        text.sample("ferry_live_holds_total", value: holds)
    }
}
