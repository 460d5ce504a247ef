import Foundation

/// Subscriptions to server streams (docs/API.md "Subscriptions"): the app
/// subscribes to what a screen needs (a public set, a starred board); each
/// sync downloads the queue of new subscriptions first, by priority and the
/// most recently opened first (Trello's queue: the set just opened before
/// everything else), then the default stream, then the subscriptions that
/// already synced.
extension SyncEngine {
    /// Subscribes this device to stream `stream` of root row `id`
    /// (`GET /v1/changes?stream=<stream>:<id>`). Kept in the store at once, so
    /// it works offline and survives restarts: its rows download with the next
    /// sync that reaches the server (in continuous mode, one starts now).
    /// Subscribing again to a subscription (or one unsubscribed within its TTL)
    /// moves it to the head of its priority and resumes it from its cursor.
    ///
    /// - Parameters:
    ///   - ttl: how long its rows stay after ``unsubscribe(_:)``, as a warm cache.
    ///   - priority: its place in the download queue.
    @discardableResult
    public func subscribe(stream: String, id: String, ttl: SubscriptionTTL = .default, priority: SubscriptionPriority = .normal)
        throws -> StreamSubscription
    {
        try store.subscribe(stream: stream, id: id, ttl: ttl, priority: priority)
        // A subscription preempts the stream downloading now (if lower in the queue) at its next page.
        signal.post(.sync)
        return StreamSubscription(stream: stream, id: id, store: store)
    }

    /// ``subscribe(stream:id:ttl:priority:)`` for a record type that is a stream's
    /// root: `engine.subscribe(StudySet.self, id: set.id, ttl: .days(7), priority: .high)`.
    @discardableResult
    public func subscribe<Root: FerryStreamRoot>(
        _ type: Root.Type, id: Root.ID, ttl: SubscriptionTTL = .default, priority: SubscriptionPriority = .normal
    ) throws -> StreamSubscription {
        try subscribe(stream: Root.stream, id: id.rowID, ttl: ttl, priority: priority)
    }

    /// Unsubscribes: it leaves the download queue at once (a subscription not
    /// yet synced is never downloaded), and its rows leave the store when its
    /// TTL ends, except rows another subscription or the default stream holds,
    /// and rows with edits not yet uploaded
    /// (``SyncEvent/evicted(stream:id:removed:keptForEdits:)``): at once with a
    /// TTL of 0 (this call evicts what is due, as FerryWeb's), in continuous
    /// mode when the TTL ends, else with the first sync after it.
    public func unsubscribe(_ subscription: StreamSubscription) throws {
        try store.unsubscribe(stream: subscription.stream, id: subscription.id, at: now())
        try evict()
        // Continuous mode wakes for the new TTL's end.
        signal.post(.unsubscribed)
    }

    /// Every subscription in the store, unsubscribed ones within their TTL included, the latest first.
    public func subscriptions() throws -> [StreamSubscription] {
        try store.subscriptionKeys().map { StreamSubscription(stream: $0.stream, id: $0.id, store: store) }
    }

    /// Rows of unsubscribed streams whose TTL passed leave; run at each round's
    /// start (needing no network), after its upload (edits uploaded free their rows),
    /// at `unsubscribe`, and in continuous mode when a TTL ends.
    func evict() throws {
        emit(try store.evictExpired(now: now()))
    }

    /// The download queue: while a subscription waits that has not synced,
    /// the head goes (by priority, then the most recently opened). A stream
    /// that a new head overtakes stops after its current page and waits again.
    func pullQueue() async throws {
        var refused = Set<String>()
        while let head = try store.subscriptionQueue().first(where: { !refused.contains($0.stream + ":" + $0.id) }) {
            if try await pullStream(head, preemptible: true) == .refused { refused.insert(head.stream + ":" + head.id) }
        }
    }

    /// The subscriptions that already synced: their new changes (a cheap 304 check first).
    func pullSynced() async throws {
        for subscription in try store.syncedSubscriptions() {
            try await pullStream(subscription, preemptible: false)
            // A subscription made meanwhile goes before the rest.
            try await pullQueue()
        }
    }

    enum StreamOutcome { case done, overtaken, dropped, refused }

    /// One subscription's stream from its cursor to its end, each page applied
    /// with its cursor and its rows' sources in one transaction.
    @discardableResult
    func pullStream(_ subscription: FerryStore.SubscriptionRecord, preemptible: Bool) async throws -> StreamOutcome {
        let (stream, id) = (subscription.stream, subscription.id)
        var cursor = subscription.cursor
        var check = cursor != nil
        var restarted = false
        if subscription.status != "synced" { try store.setSubscriptionStatus(stream: stream, id: id, "syncing") }
        do {
            while true {
                var path = "/v1/changes?limit=\(Self.streamPageLimit)&stream=" + PercentEncoding.encoded(stream) + ":" + PercentEncoding.encoded(id)
                if let cursor { path += "&since=" + cursor }
                var request = TransportRequest(method: "GET", path: path)
                if check, let cursor { request.headers["If-None-Match"] = "\"\(cursor)\"" }
                check = false
                let response = try await send(request)
                switch response.status {
                case 304:
                    // Nothing after its cursor: the stream's end. A subscription made
                    // again within its TTL is queued with its cursor, so this check is its
                    // whole download; left queued, pullQueue() would send it forever.
                    if subscription.status != "synced" { try store.setSubscriptionStatus(stream: stream, id: id, "synced") }
                    return .done
                case 410 where !restarted:
                    // Its cursor is behind the server's purge horizon: from the beginning again.
                    restarted = true
                    try store.restartSubscription(stream: stream, id: id)
                    cursor = nil
                    continue
                case 400:
                    let detail = response.object?["detail"]?.string ?? "the server refused the stream (400)"
                    try store.setSubscriptionStatus(stream: stream, id: id, "refused", problem: detail)
                    return .refused
                case 200:
                    break
                default:
                    throw refusal(response, "GET /v1/changes?stream=")
                }
                guard let body = response.object, let next = body["cursor"]?.string, case .array(let entries)? = body["changes"] else {
                    throw FerryKitError.malformedAnswer("a stream page without changes and cursor")
                }
                let changes: [(resource: String, data: RowData)] = entries.compactMap { entry in
                    guard let resource = entry.object?["resource"]?.string, let data = entry.object?["data"]?.object else { return nil }
                    return (resource, data)
                }
                let more = body["has_more"]?.bool == true
                let resolvers = self.resolvers
                let events: [SyncEvent]
                do {
                    events = try store.applyStreamPage(changes, stream: stream, id: id, cursor: next, synced: !more) { resolvers[$0] }
                } catch FerryKitError.unknownResource {
                    try await refreshSchema()
                    events = try store.applyStreamPage(changes, stream: stream, id: id, cursor: next, synced: !more) { resolvers[$0] }
                }
                emit(events)
                try update { $0.received += changes.count }
                cursor = next
                // Its end; dropped before it synced (it leaves the queue now); or overtaken by a new head.
                switch SubscriptionRules.afterPage(subscription.key, more: more, preemptible: preemptible, all: try store.allSubscriptions()) {
                case .done: return .done
                case .dropped: return .dropped
                case .overtaken:
                    try store.setSubscriptionStatus(stream: stream, id: id, "queued")
                    return .overtaken
                case .next: break
                }
            }
        } catch {
            if subscription.status != "synced" { try? store.setSubscriptionStatus(stream: stream, id: id, "queued") }
            throw error
        }
    }

    /// Rows per page of a subscription's stream. A stream page costs the server
    /// a fixed ~30 ms of PostgreSQL CPU besides its rows: a public set of 5,000
    /// terms took 11 pages of 500 (0.39 s of PostgreSQL CPU) and takes 3 of
    /// 2,000 (0.15 s) (bench/public-sets/README.md, stop 16). A new head of the
    /// queue overtakes a download at its next page, so a page stays well under
    /// the server's largest (5,000).
    static let streamPageLimit = 2_000
}
