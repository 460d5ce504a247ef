import Foundation

/// Continuous mode: the engine syncs by itself between `start()` and `stop()`.
///
/// One loop task runs every round and every wait, so the store sees one sync
/// at a time, as with ``sync()``. ``LivePlan`` decides each step; the loop
/// carries it out and tells it what happened. A long poll runs in a task of its
/// own while the loop waits on ``LiveSignal`` for whatever comes first: the
/// poll's answer, a local write (``OutboxObserver``), the network back, a
/// `sync()`, `stop()`, or the time the plan set. Ending a poll early drops a
/// request that changed nothing (``exchange(_:longPoll:)``).
extension SyncEngine {
    /// Starts syncing by itself, until ``stop()``:
    /// - a round at once (the upload, then the changes feed to its end);
    /// - after each local write (through the store or with GRDB on
    ///   ``FerryStore/database``), an upload `uploadDelay` seconds later,
    ///   with every write made meanwhile;
    /// - between rounds, a long poll on the feed (`wait=longPollWait`): other
    ///   devices' edits arrive as they commit. With subscriptions, one wait
    ///   follows them all (`POST /v1/changes/wait` with the default stream's
    ///   cursor and each subscription's) and each answer fetches the streams
    ///   it names, and only those, so a commit in a subscribed stream arrives
    ///   as it commits too, and an unchanged stream costs no request;
    /// - when an unsubscribed stream's TTL ends, its rows leave at once
    ///   (``SyncEvent/evicted(stream:id:removed:keptForEdits:)``), with no
    ///   round and no request;
    /// - after an error, the next try when ``RetryPolicy`` says
    ///   (``SyncStatus/nextAttempt``), at once on ``networkBecameAvailable()``;
    ///   after two 401s (``SyncStatus/paused``), nothing until ``sync()`` or
    ///   ``networkBecameAvailable()``.
    ///
    /// `longPollWait` must stay under the transport's timeout
    /// (``URLSessionTransport``'s is 30 s) and the server's
    /// `live.max_wait_seconds` (30 by default). Calling `start()` while
    /// running changes nothing. ``SyncStatus/mode`` and
    /// ``SyncStatus/connected`` show it. On Apple platforms an `NWPathMonitor`
    /// calls ``networkBecameAvailable()``; elsewhere the app does.
    public func start(uploadDelay: TimeInterval = 0.25, longPollWait: Int = 20) {
        guard continuous == nil else { return }
        signal.reset()
        let signal = self.signal
        let observer = OutboxObserver { signal.post(.wrote) }
        store.database.add(transactionObserver: observer, extent: .observerLifetime)
        var run = ContinuousRun(
            plan: LivePlan(uploadDelay: uploadDelay, now: now()), longPollWait: max(0, longPollWait),
            observer: observer, clock: now())
        #if canImport(Network)
        run.monitor = NetworkMonitor { signal.post(.network) }
        #endif
        run.loop = Task { [weak self] in
            while let engine = self, await engine.step() {}
        }
        continuous = run
        try? update { $0.mode = .continuous }
    }

    /// Ends continuous mode: the wait is dropped, an upload in flight is
    /// cancelled (its operations stay in the outbox and go, under the same
    /// `Idempotency-Key`, with the next round), and this returns once the loop
    /// has ended, with no task of the engine's left running. For backgrounding
    /// and signing out; ``start(uploadDelay:longPollWait:)`` again resumes.
    public func stop() async {
        guard let loop = continuous?.loop else { return }
        continuous?.plan.stopped()
        signal.post(.stop)
        loop.cancel()
        await loop.value
    }

    /// The network is back: in continuous mode, the next round runs at once
    /// instead of at the end of its backoff. Safe from any thread; nothing
    /// happens in manual mode.
    public nonisolated func networkBecameAvailable() {
        signal.post(.network)
    }

    // MARK: The loop

    /// One step of the plan; false once continuous mode ended.
    func step() async -> Bool {
        guard let run = continuous else { return false }
        let now = max(now(), run.clock)
        switch run.plan.next(now: now) {
        case .end:
            await endPoll()
            finish()
            return false
        case .round:
            await endPoll()
            let answering = syncWaiters
            syncWaiters = []
            do {
                try await round()
                continuous?.plan.roundSucceeded()
                for waiter in answering { waiter.resume() }
            } catch {
                continuous?.plan.failed(retryAt: currentStatus.paused ? nil : schedule.nextAttempt)
                for waiter in answering { waiter.resume(throwing: error) }
            }
            // The round evicted what was due: the next eviction from the store as it is now.
            planEvictions(now: max(self.now(), now))
            return true
        case .evict:
            // An unsubscribed stream's TTL ended: its rows leave now, not at the next round,
            // which a device that only listens may not run for hours. No network, so the
            // long poll stays open; a page of a stream evicted meanwhile is dropped
            // (``FerryStore/applyStreamPage``).
            do { emit(try store.evictExpired(now: now)) } catch {}
            planEvictions(now: now)
            return true
        case .wait(let until, let listening):
            if listening { listen(run.longPollWait) } else { await endPoll() }
            let wakes = await signal.wait(seconds: until.map { max(0, $0.timeIntervalSince(now)) })
            if wakes.isEmpty, let until { continuous?.clock = until }
            await handle(wakes)
            return true
        }
    }

    /// Tells the plan when the next eviction is due (``SubscriptionRules/nextEviction(_:now:)``).
    func planEvictions(now: Date) {
        continuous?.plan.evictions(due: (try? store.allSubscriptions()).flatMap { SubscriptionRules.nextEviction($0, now: now) })
    }

    /// Tells the plan what woke the loop.
    func handle(_ wakes: Set<LiveSignal.Wake>) async {
        let now = now()
        if wakes.contains(.stop) { continuous?.plan.stopped() }
        if wakes.contains(.unsubscribed) { planEvictions(now: max(now, continuous?.clock ?? now)) }
        if wakes.contains(.network) || wakes.contains(.sync) { continuous?.plan.askedNow(now: now) }
        if wakes.contains(.wrote) { continuous?.plan.wrote(now: now) }
        if wakes.contains(.pollEnded), let poll = continuous?.poll {
            let outcome = await poll.value
            continuous?.poll = nil
            switch outcome {
            case .answered(let empty, let elapsed): continuous?.plan.pollAnswered(empty: empty, elapsed: elapsed, now: now)
            case .failed(let due): continuous?.plan.failed(retryAt: due)
            case .cancelled: break
            }
        }
    }

    /// Opens a long poll unless one is open.
    func listen(_ wait: Int) {
        guard continuous != nil, continuous?.poll == nil else { return }
        let signal = self.signal
        continuous?.poll = Task { [weak self] in
            defer { signal.post(.pollEnded) }
            guard let engine = self else { return .cancelled }
            return await engine.longPoll(wait)
        }
    }

    /// One long poll, its pages applied.
    func longPoll(_ wait: Int) async -> PollOutcome {
        let started = now()
        do {
            // The queue of new subscriptions first, without waiting: one left for after
            // the long poll would wait up to `wait` seconds for its download.
            let before = currentStatus.received
            try await pullQueue()
            var received = currentStatus.received - before
            if let since = try waitedStreams(), let changed = try await waitForStreams(since, wait: wait) {
                // Only the streams the answer named: one with nothing new costs no request.
                received += changed.isEmpty ? 0 : try await pull(only: Set(changed))
            } else {
                // The long poll follows the default stream; subscriptions catch up
                // after each answer (at most `wait` seconds late), new ones first.
                received += try await pull(wait: wait) + pullSubscriptions()
            }
            succeeded()
            return .answered(empty: received == 0, elapsed: now().timeIntervalSince(started))
        } catch {
            if Task.isCancelled { return .cancelled }
            let due = failed(error)
            return .failed(due: currentStatus.paused ? nil : due)
        }
    }

    /// After a wait's answer, the streams it named (`default`, `<stream>:<id>`),
    /// each from its cursor, as FerryWeb's `afterWait` does, and the queue of
    /// subscriptions made meanwhile, as in a round. What they received.
    private func pull(only changed: Set<String>) async throws -> Int {
        let fromDefault = changed.contains("default") ? try await pull() : 0
        let before = currentStatus.received
        try await pullQueue()
        for subscription in try store.syncedSubscriptions() where changed.contains(subscription.stream + ":" + subscription.id) {
            try await pullStream(subscription, preemptible: false)
            try await pullQueue()
        }
        return fromDefault + currentStatus.received - before
    }

    /// The queue of new subscriptions, then the synced ones: what they received.
    private func pullSubscriptions() async throws -> Int {
        let before = currentStatus.received
        try await pullQueue()
        try await pullSynced()
        return currentStatus.received - before
    }

    /// The streams the waits follow when this device has subscriptions: the
    /// default stream's cursor, then each synced subscription's (by priority,
    /// then the most recently opened), by the keys of `POST /v1/changes/wait`.
    /// Nil without subscriptions (the default stream's own long poll then),
    /// before the first sync, and while a subscription waits in the queue
    /// (downloaded first, without waiting).
    private func waitedStreams() throws -> [(key: String, cursor: String)]? {
        SubscriptionRules.waited(defaultCursor: try store.cursor(), try store.allSubscriptions())
    }

    /// Waits on `since`: the keys with news (empty when the waits ended with
    /// none), and the streams beyond ``SubscriptionRules/maxWaits`` waits, which are
    /// fetched after every answer. One request while the streams fit in one
    /// (`live.max_wait_streams`, which `GET /v1` gives and the store keeps with the
    /// schema, ``SubscriptionRules/defaultWaitCap`` when it gave none); else several
    /// at once, each of at most that many streams in order, and the first that
    /// names news ends the others. Nil when the server does not take one (an
    /// older server's 404, or a 400 for a stream it no longer knows): the
    /// default stream's long poll then, and a subscription the server refuses
    /// is marked refused by its own download.
    private func waitForStreams(_ since: [(key: String, cursor: String)], wait: Int) async throws -> [String]? {
        let given = try store.schema()?.live?.maxWaitStreams
        let cap = max(1, given ?? SubscriptionRules.defaultWaitCap)
        let plan = SubscriptionRules.plan(since, cap: given)
        let answer = plan.waits.count > 1 ? try await waitAll(plan.waits, wait: wait) : try await waitOnce(plan.waits[0], wait: wait)
        guard case .refused(let status) = answer else {
            if case .changed(let changed) = answer { return changed + plan.unwaited.map(\.key) }
            return nil
        }
        // A 400 to a wait of several streams may be the limit: one this store
        // does not know (its schema came before the server gave it), or one
        // lowered since the store learned it (a restart with a smaller
        // `live.max_wait_streams`). Ask `GET /v1`, and wait again split if the
        // limit it gives now splits the streams further.
        if status == 400, since.count > 1 {
            try await refreshSchema()
            if let learned = try store.schema()?.live?.maxWaitStreams, learned < cap { return try await waitForStreams(since, wait: wait) }
        }
        return nil
    }

    /// What one wait, or several at once, came to.
    private enum WaitAnswer: Sendable {
        /// The keys with news (empty: the wait ended with none).
        case changed([String])
        /// A 400, 404 or 405: the server takes no such wait.
        case refused(status: Int)
    }

    /// The waits of `parts` at once: the first that names news ends the others, and any refusal all of them.
    private func waitAll(_ parts: [[(key: String, cursor: String)]], wait: Int) async throws -> WaitAnswer {
        try await withThrowingTaskGroup(of: WaitAnswer.self) { group in
            for part in parts { group.addTask { try await self.waitOnce(part, wait: wait) } }
            for try await answer in group {
                switch answer {
                case .refused:
                    group.cancelAll()
                    return answer
                case .changed(let changed) where !changed.isEmpty:
                    // The others are abandoned (``exchange(_:longPoll:)``): the streams named are fetched now, and the waits start again after.
                    group.cancelAll()
                    return answer
                case .changed:
                    continue
                }
            }
            return .changed([])
        }
    }

    /// One `POST /v1/changes/wait` on `since`.
    private func waitOnce(_ since: [(key: String, cursor: String)], wait: Int) async throws -> WaitAnswer {
        var streams: [String: JSONValue] = [:]
        for (key, cursor) in since { streams[key] = .string(cursor) }
        let body = JSONValue.object(["wait": .int(Int64(wait)), "since": .object(streams)])
        let response = try await send(
            TransportRequest(method: "POST", path: "/v1/changes/wait", body: body.encoded()), longPoll: true)
        switch response.status {
        case 200:
            guard let changed = response.object?["changed"]?.array else {
                throw FerryKitError.malformedAnswer("a wait's answer without changed")
            }
            return .changed(changed.compactMap(\.string))
        case 400, 404, 405:
            return .refused(status: response.status)
        default:
            throw refusal(response, "POST /v1/changes/wait")
        }
    }

    /// Ends the long poll, if one is open, and waits for its task.
    func endPoll() async {
        guard let poll = continuous?.poll else { return }
        poll.cancel()
        _ = await poll.value
        continuous?.poll = nil
        // Its end was posted as it ended; it must not be taken for the next poll's.
        signal.discard(.pollEnded)
    }

    /// The loop's end: the outbox no longer watched, `sync()` calls still
    /// waiting answered, the status back to manual.
    func finish() {
        if let run = continuous {
            store.database.remove(transactionObserver: run.observer)
            run.cancel()
        }
        continuous = nil
        let waiting = syncWaiters
        syncWaiters = []
        for waiter in waiting { waiter.resume(throwing: CancellationError()) }
        try? update {
            $0.mode = .manual; $0.connected = false
        }
    }
}

/// Continuous mode's state while it runs.
struct ContinuousRun: Sendable {
    var plan: LivePlan
    let longPollWait: Int
    let observer: OutboxObserver
    /// The latest deadline the loop waited for: the plan's clock never runs
    /// behind it, even with a test's fixed `now`.
    var clock: Date
    var loop: Task<Void, Never>?
    var poll: Task<PollOutcome, Never>?
    #if canImport(Network)
    var monitor: NetworkMonitor?
    #endif

    init(plan: LivePlan, longPollWait: Int, observer: OutboxObserver, clock: Date) {
        (self.plan, self.longPollWait, self.observer, self.clock) = (plan, longPollWait, observer, clock)
    }

    func cancel() {
        loop?.cancel()
        poll?.cancel()
        #if canImport(Network)
        monitor?.cancel()
        #endif
    }
}

/// How a long poll ended.
enum PollOutcome: Sendable {
    /// The server answered: with changes, or empty after its wait.
    case answered(empty: Bool, elapsed: TimeInterval)
    /// It failed; the next try is due then (nil: sync is paused).
    case failed(due: Date?)
    /// The loop ended it.
    case cancelled
}
