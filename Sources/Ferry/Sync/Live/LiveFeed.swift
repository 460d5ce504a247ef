import FerryBase
import FerryHTTP
import Logging

/// The live side of the changes feed on one instance: the waiting long polls
/// and event streams (``WaiterRegistry``) and the one LISTEN connection that
/// wakes them (``ChangeListener``). docs/changes-feed.md, "Live", has the design.
public final class LiveFeed: Sendable {
    /// `live.*` of the configuration.
    public let settings: FerryConfiguration.Live
    let registry: WaiterRegistry
    /// The checks woken waiters share (``SharedChecks``).
    let sharedChecks = SharedChecks()
    /// The checks the waiters of many users on one stream share (``StreamChecks``).
    let streamChecks = StreamChecks()
    /// Default-stream checks shared across users (``DefaultChecks``).
    let defaultChecks = DefaultChecks()
    private let listener: ChangeListener
    /// Waiters to wake again after a failed check (``retrySoon(_:)``).
    let retries = RetryWakes()
    /// The hints of this instance's own commits: woken here, sent to the others after the commit.
    let outbox: HintOutbox
    /// Every instance's waits of a user, for the console (``WaitRoster``).
    let roster: WaitRoster

    /// A feed whose listener connects to `live.listen_url` (else `database.url`)
    /// once ``start()`` is called; `onSchemaChange` runs on the listener's
    /// thread when a migration announces a new schema, `onUserRevoked` when an
    /// operator disabled a user or revoked all their tokens (on any instance).
    init(
        configuration: FerryConfiguration, logger: Logger, onUserRevoked: @escaping @Sendable (String) -> Void = { _ in },
        onSchemaChange: @escaping @Sendable () -> Void
    ) throws {
        let settings = configuration.live
        self.settings = settings
        // The registry pokes the listener, which is made after it.
        let poke = Locked<ChangeListener?>(nil)
        let registry = WaiterRegistry(
            limits: .init(perInstance: settings.maxWaiters, perUser: settings.maxWaitersPerUser),
            frontierWatched: { poke.withLock { $0 }?.poke() })
        self.registry = registry
        let url = settings.listenURL.isEmpty ? configuration.database.url : settings.listenURL
        let answerTimeout = configuration.database.answerTimeout
        let outbox = HintOutbox(url: url, registry: registry, logger: logger, answerTimeout: answerTimeout)
        self.outbox = outbox
        let roster = WaitRoster(instance: outbox.instance)
        self.roster = roster
        listener = try ChangeListener(
            url: url, answerTimeout: answerTimeout, schemaName: configuration.database.schema, registry: registry,
            retries: retries, roster: roster,
            fallbackSeconds: settings.fallbackCheckSeconds, logger: logger, instance: outbox.instance, onSchemaChange: onSchemaChange,
            onUserRevoked: onUserRevoked, onListening: { [outbox] backend in outbox.listenerBackend.store(backend, ordering: .releasing) })
        poke.withLock { [listener] in $0 = listener }
    }

    /// Starts listening (in the background: a database that is down delays wakes, not the server).
    func start() {
        outbox.start()
        listener.start()
    }

    /// Stops listening, and sending this instance's hints.
    func stop() {
        listener.stop()
        outbox.stop()
    }

    /// Long polls and event streams waiting now.
    public var waiters: Int { registry.count }

    /// How long a waiter whose resumed check met a passing failure waits before it checks again.
    static let retrySeconds = 1.0

    /// A woken waiter's check failed with a passing failure (a 503: the pool busy, a
    /// statement timeout, a lost race, a dropped connection) and it parks again. While the
    /// listener is down its fallback checks wake every waiter; while it is up nothing
    /// would, until another commit concerns this one, so it is woken again in
    /// ``retrySeconds`` (Retry-After's value), by the listener's loop (``RetryWakes``).
    /// Without this, a waiter on a quiet stream slept until its deadline with the change it
    /// was woken for unsent.
    func retrySoon(_ ticket: any LiveTicket) {
        guard isListening else { return }
        registry.retryCount.add(1, ordering: .relaxed)
        if retries.add(ticket, at: MonotonicClock.now() + Self.retrySeconds) { listener.poke() }
    }

    /// Whether the LISTEN connection is up now.
    public var isListening: Bool { listener.listening.load(ordering: .acquiring) }

    /// Waiters whose changes the frontier holds back now (an older transaction runs).
    public var heldWaiters: Int { registry.heldCount }

    /// Times a waiter started waiting for the frontier (``heldWaiters`` counts those waiting now).
    public var holds: Int { registry.holdCount.load(ordering: .relaxed) }

    /// Whether some waiter's caller is not known yet (its first check has not named them).
    public var registryHasAnonymousWaiters: Bool { registry.anonymousCount > 0 }

    /// Hints of this instance's own commits, woken here and sent to the other instances (core 0028).
    public var hintsPublished: Int { outbox.published.load(ordering: .relaxed) }

    /// NOTIFY transactions that carried them to the other instances.
    public var hintNotifies: Int { outbox.notifies.load(ordering: .relaxed) }

    /// Other instances' listeners the outbox saw at its last check; -1 before its first.
    public var hintPeers: Int { outbox.peers.load(ordering: .relaxed) }

    /// Hints of this instance's commits not sent, because no other instance listened (lines).
    public var hintsUnsentAlone: Int { outbox.unsentAlone.load(ordering: .relaxed) }

    /// Hints heard: from the sync triggers (writes made outside Ferry), the other instances, and this one's own commits.
    public var hintsReceived: Int { registry.hintCount.load(ordering: .relaxed) }

    /// Waiters woken (by a hint, the frontier passing their changes, or a check for everyone).
    public var wakes: Int { registry.wakeCount.load(ordering: .relaxed) }

    /// Checks of the feed that waiters made.
    public var checks: Int { registry.checkCount.load(ordering: .relaxed) }

    /// Waiters answered by another waiter's identical check, without a query of their own.
    public var sharedAnswers: Int { registry.sharedCount.load(ordering: .relaxed) }

    /// Of ``sharedAnswers``, default-stream waiters answered from another user's check (``DefaultChecks``).
    public var defaultSharedAnswers: Int { registry.defaultSharedCount.load(ordering: .relaxed) }

    /// Checks running now (a waiter whose check is done is parked, or answered).
    public var checksRunning: Int { registry.checksRunning.load(ordering: .relaxed) }

    /// Times the LISTEN connection was established (1 after a quiet start, more after outages).
    public var listenerConnections: Int { listener.connections.load(ordering: .relaxed) }
}
