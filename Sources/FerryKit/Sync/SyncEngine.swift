import Foundation

/// Syncs one ``FerryStore`` with its server: one actor per store.
///
/// ``sync()`` uploads the outbox (coalesced by ``UploadPlanner``, each request
/// with its `Idempotency-Key`), then pulls the changes feed (a cheap 304 check
/// first) and applies it page by page with its cursor. Every answer goes
/// through ``RetryPolicy``; every conflict, rejection and removal becomes a
/// ``SyncEvent`` on ``events``, and every state change a ``SyncStatus`` on
/// ``status``.
///
/// Two ways to run it. ``start(uploadDelay:longPollWait:)`` syncs by itself
/// until ``stop()``: it uploads shortly after each local write, holds a long
/// poll on the changes feed so that other devices' edits arrive as they
/// commit, backs off by ``RetryPolicy`` after errors, and tries again at once
/// on ``networkBecameAvailable()``. Or the app calls ``sync()`` when it likes
/// (a background task, a test); ``SyncStatus/nextAttempt`` says when a failed
/// one is due again.
public actor SyncEngine {
    let store: FerryStore
    let transport: any Transport
    let policy: RetryPolicy
    let random: @Sendable () -> Double
    /// Where bearer tokens come from, and the one in use.
    let tokens: any TokenProvider
    var token: AccessToken?
    let resolvers: [String: ThreeWayMerge.Resolver]
    /// Items per bulk call; Ferry takes up to `limits.max_bulk_items` (1,000 by default).
    let maxBulk: Int
    /// Steps an initial sync takes before every resource whole.
    let initialSyncOrder: [DownloadStep]
    /// Rows per Index page of an initial sync (Ferry's `limit`, at most 1,000).
    let pageSize: Int
    /// Sends after which an unsettled operation counts as stalled.
    let stalledAfter: Int
    /// The clock for due times and `Retry-After` dates (a fixed one in tests).
    let now: @Sendable () -> Date
    /// What carries from one round to the next (failures in a row, the last 401).
    var schedule = SyncSchedule()
    /// The backoff exponent for a request that must wait: the rounds failed so far.
    var attempts: Int { schedule.failures }

    /// What the retry table says of a server's answer: by its status, its
    /// `Retry-After` and its problem's `code`, at this engine's backoff.
    func retryStep(after response: TransportResponse) -> RetryPolicy.Step {
        let retryAfter = RetryPolicy.retryAfter(response.headers["retry-after"], now: now())
        return policy.step(
            after: .status(response.status, retryAfter: retryAfter, code: response.object?["code"]?.string),
            attempt: attempts, random: random)
    }

    /// Conflicts resolved, operations rejected, rows removed.
    public nonisolated let events: AsyncStream<SyncEvent>
    let eventSink: AsyncStream<SyncEvent>.Continuation
    /// Every change of ``currentStatus``.
    public nonisolated let status: AsyncStream<SyncStatus>
    let statusSink: AsyncStream<SyncStatus>.Continuation
    public private(set) var currentStatus = SyncStatus()

    /// Continuous mode while it runs (``start(uploadDelay:longPollWait:)``).
    var continuous: ContinuousRun?
    /// What wakes continuous mode's loop; ``networkBecameAvailable()`` posts here from any thread.
    nonisolated let signal = LiveSignal()
    /// `sync()` calls made in continuous mode, answered when the loop's next round ends.
    var syncWaiters: [CheckedContinuation<Void, any Error>] = []

    /// - Parameters:
    ///   - tokens: where bearer tokens come from: the app's identity provider's
    ///     session, or ``FerryAuth/PasswordSession`` (``TokenProvider``).
    ///   - resolvers: per resource, replaces the default merge (local wins) of a conflicting field.
    ///   - maxBulk: items per bulk call; 1 sends every row's writes alone.
    ///   - initialSyncOrder: what an initial sync downloads first (Trello's queue:
    ///     the set the user has open), before every resource whole, parents first.
    ///   - pageSize: rows per Index page of an initial sync; each page is
    ///     applied and forgotten, so memory stays bounded by it.
    ///   - stalledAfter: sends without a settling answer after which an
    ///     operation shows as stalled, in ``SyncStatus/stalled`` and once as a
    ///     ``SyncEvent/stalled(resource:id:attempts:lastError:)``.
    ///   - now: the clock (a fixed one in tests).
    ///   - random: [0, 1) draws for backoff jitter (a fixed one in tests).
    public init(
        store: FerryStore, transport: any Transport, tokens: any TokenProvider, policy: RetryPolicy = RetryPolicy(),
        resolvers: [String: ThreeWayMerge.Resolver] = [:],
        maxBulk: Int = 100,
        initialSyncOrder: [DownloadStep] = [],
        pageSize: Int = 1_000,
        stalledAfter: Int = 3,
        now: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maxBulk = max(1, maxBulk)
        self.initialSyncOrder = initialSyncOrder
        self.pageSize = min(max(1, pageSize), 1_000)
        self.stalledAfter = max(1, stalledAfter)
        self.now = now
        self.store = store
        self.transport = transport
        self.tokens = tokens
        self.policy = policy
        self.resolvers = resolvers
        self.random = random
        (events, eventSink) = AsyncStream.makeStream(of: SyncEvent.self, bufferingPolicy: .unbounded)
        (status, statusSink) = AsyncStream.makeStream(of: SyncStatus.self, bufferingPolicy: .bufferingNewest(16))
    }

    /// An engine with one fixed bearer token (``FerryAuth/signIn(transport:name:password:)``,
    /// `ferry token issue`), as ``FixedToken``: a 401 pauses sync. Pass
    /// `tokens:` for the other parameters, or a token that renews.
    public init(store: FerryStore, transport: any Transport, token: String) {
        self.init(store: store, transport: transport, tokens: FixedToken(token))
    }

    /// The form of 0.1.0 before `tokens:`, kept so that an app written against it
    /// still compiles (CHANGELOG.md: a changed public API keeps its old form,
    /// deprecated, for at least one release).
    @available(*, deprecated, message: "pass tokens: FixedToken(token) (or a TokenProvider that renews) with maxBulk:")
    public init(store: FerryStore, transport: any Transport, token: String, maxBulk: Int) {
        self.init(store: store, transport: transport, tokens: FixedToken(token), maxBulk: maxBulk)
    }

    // An app's `for await` over ``events`` or ``status`` ends when its engine
    // goes (sign-out, a new account): an AsyncStream whose continuation is
    // dropped without `finish()` keeps its reader waiting forever, and with it
    // whatever that task holds.
    deinit {
        // An engine dropped without `stop()`: its loop ends with its current step.
        continuous?.cancel()
        eventSink.finish()
        statusSink.finish()
    }

    /// One full round: the schema if the store has none, the upload, the
    /// download (subscriptions not yet synced, by priority; the default
    /// stream; the subscriptions already synced), and, at its start and after
    /// the upload, the eviction of unsubscribed streams whose TTL passed.
    /// Returns normally when both finished; throws the transport error or
    /// ``FerryKitError`` that stopped it, after recording it in ``currentStatus``.
    ///
    /// In continuous mode the loop runs the round (at once, whatever backoff
    /// was under way), so that two rounds never interleave, and this returns
    /// or throws with its outcome; a `stop()` meanwhile throws `CancellationError`.
    public func sync() async throws {
        guard continuous?.plan.ended == false else { return try await round() }
        try await withCheckedThrowingContinuation { continuation in
            syncWaiters.append(continuation)
            signal.post(.sync)
        }
    }

    /// ``sync()``'s round, run by the app's call or by continuous mode's loop.
    func round() async throws {
        var round = SyncRound()
        do {
            try evict()
            if try store.schema() == nil { try await refreshSchema() }
            try update { $0.phase = .uploading }
            try await push(&round)
            try evict()
            try update { $0.phase = .downloading }
            // New subscriptions first (the set just opened), then the default stream, then the rest.
            try await pullQueue()
            try await pull()
            // A revoked entry the default stream sent for a subscription's row queued that subscription again.
            try await pullQueue()
            try await pullSynced()
            succeeded()
            try update { $0.phase = .idle }
        } catch {
            // A cancelled round (`stop()`, or the app's task) did not fail: nothing to back off from.
            if Task.isCancelled {
                try? update { $0.phase = .idle }
            } else {
                failed(error)
            }
            throw error
        }
    }

    /// A round or a long poll reached the server and did all it had to.
    func succeeded() {
        schedule.succeeded()
        try? update {
            $0.online = true; $0.lastError = nil; $0.nextAttempt = nil; $0.paused = false
        }
    }

    /// A round or a long poll failed with `error`: recorded, and the next try
    /// scheduled by the retry table. Returns when it is due.
    @discardableResult
    func failed(_ error: any Error) -> Date {
        let due = schedule.failed(error, policy: policy, now: now(), random: random)
        try? update {
            $0.online = !(error is URLError) && !(error is TransportFailure)
            $0.phase = .idle
            $0.lastError = "\(error)"
            $0.nextAttempt = due
        }
        return due
    }

    /// Reads `GET /v1` and brings the local tables up to it.
    public func refreshSchema() async throws {
        let response = try await send(TransportRequest(method: "GET", path: "/v1"))
        guard response.status == 200 else { throw FerryKitError.malformedAnswer("GET /v1 answered \(response.status)") }
        let schema = try JSONDecoder().decode(ServerSchema.self, from: response.body)
        try store.apply(schema: schema)
    }

    func update(_ change: (inout SyncStatus) -> Void) throws {
        change(&currentStatus)
        let outbox = try store.outboxSummary(stalledAfter: stalledAfter)
        currentStatus.pending = outbox.pending
        currentStatus.rejected = outbox.rejected
        currentStatus.oldestPending = outbox.oldestPending
        currentStatus.stalled = outbox.stalled
        statusSink.yield(currentStatus)
    }

    /// One request on the transport, shown in ``SyncStatus/inFlightSince``
    /// while it waits, or as ``SyncStatus/connected`` for a long poll (which
    /// is meant to wait).
    ///
    /// A read is abandoned when the task is cancelled (continuous mode ends a
    /// long poll so, when the app writes or stops it): it returns at once,
    /// whether the transport honours cancellation or not, and its late
    /// answer, which changed nothing, is dropped. So is a long poll sent as a
    /// POST (`POST /v1/changes/wait`), which reads too (`WaitLeftBehindTests`:
    /// `stop()` waited out its answer). A write is not: its outcome must be
    /// recorded.
    func exchange(_ request: TransportRequest, longPoll: Bool = false) async throws -> TransportResponse {
        if longPoll { currentStatus.connected = true } else { currentStatus.inFlightSince = now() }
        statusSink.yield(currentStatus)
        defer {
            if longPoll { currentStatus.connected = false } else { currentStatus.inFlightSince = nil }
            statusSink.yield(currentStatus)
        }
        let transport = self.transport
        guard request.method == "GET" || longPoll else { return try await transport.send(request) }
        return try await abandoningOnCancel { try await transport.send(request) }
    }

    /// Operations that must wait: back to pending with why and when, and a
    /// ``SyncEvent/stalled(resource:id:attempts:lastError:)`` for each row
    /// whose operations have now been sent `stalledAfter` times.
    func postpone(_ opIDs: [UUID], error: Data, until due: Date? = nil) throws {
        try store.transition(opIDs, .deferred, error: error, nextAttempt: due)
        emit(
            try store.reachedAttempts(opIDs, stalledAfter).map {
                .stalled(resource: $0.resource, id: $0.id, attempts: stalledAfter, lastError: $0.lastError)
            })
    }

    func emit(_ events: [SyncEvent]) {
        for event in events { eventSink.yield(event) }
    }

    /// How long before its expiry a token is renewed.
    static let renewal: TimeInterval = 60

    /// The token to send: the one in use, unless there is none yet or it
    /// expires within ``renewal`` (then the provider is asked for a new one).
    /// Nil from the provider pauses sync.
    func bearer(refresh: Bool = false) async throws -> AccessToken {
        let expiring = token?.expiresAt.map { $0.timeIntervalSince(now()) < Self.renewal } ?? false
        if refresh || token == nil || expiring {
            guard let fresh = try await tokens.token(refresh: refresh || token != nil) else {
                try update { $0.paused = true }
                throw FerryKitError.unauthorized
            }
            token = fresh
        }
        guard let token else { throw FerryKitError.unauthorized }
        return token
    }

    /// Sends with the current token; a 401 asks the provider for a new one and
    /// tries once more, a second 401 pauses sync.
    func send(_ request: TransportRequest, longPoll: Bool = false) async throws -> TransportResponse {
        var request = request
        request.headers["Authorization"] = "Bearer \(try await bearer().value)"
        if request.body != nil { request.headers["Content-Type"] = "application/json" }
        let response = try await exchange(request, longPoll: longPoll)
        guard response.status == 401 else { schedule.lastUnauthorized = false; return response }
        if policy.step(after: .status(401, retryAfter: nil), attempt: 0, previousWasUnauthorized: schedule.lastUnauthorized) == .pause {
            try update { $0.paused = true }
            throw FerryKitError.unauthorized
        }
        schedule.lastUnauthorized = true
        request.headers["Authorization"] = "Bearer \(try await bearer(refresh: true).value)"
        let retried = try await exchange(request, longPoll: longPoll)
        if retried.status == 401 {
            try update { $0.paused = true }
            throw FerryKitError.unauthorized
        }
        schedule.lastUnauthorized = false
        try update { $0.paused = false }
        return retried
    }
}

/// A transport that gave no answer (used by test transports; URLSession throws `URLError`).
public struct TransportFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    /// The reason alone: it is what ``SyncStatus/lastError`` shows.
    public var description: String { reason }
}
