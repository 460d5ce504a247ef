import FerryBase
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
    private let listener: ChangeListener

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
        listener = try ChangeListener(
            url: settings.listenURL.isEmpty ? configuration.database.url : settings.listenURL,
            schemaName: configuration.database.schema, registry: registry,
            fallbackSeconds: settings.fallbackCheckSeconds, logger: logger, onSchemaChange: onSchemaChange,
            onUserRevoked: onUserRevoked)
        poke.withLock { [listener] in $0 = listener }
    }

    /// Starts listening (in the background: a database that is down delays wakes, not the server).
    func start() { listener.start() }

    /// Stops listening.
    func stop() { listener.stop() }

    /// Long polls and event streams waiting now.
    public var waiters: Int { registry.count }

    /// Whether the LISTEN connection is up now.
    public var isListening: Bool { listener.listening.load(ordering: .acquiring) }

    /// Waiters whose changes the frontier holds back now (an older transaction runs).
    public var heldWaiters: Int { registry.heldCount }

    /// Whether some waiter's caller is not known yet (its first check has not named them).
    public var registryHasAnonymousWaiters: Bool { registry.anonymousCount > 0 }

    /// Hints heard from the sync triggers.
    public var hintsReceived: Int { registry.hintCount.load(ordering: .relaxed) }

    /// Waiters woken (by a hint, the frontier passing their changes, or a check for everyone).
    public var wakes: Int { registry.wakeCount.load(ordering: .relaxed) }

    /// Checks of the feed that waiters made.
    public var checks: Int { registry.checkCount.load(ordering: .relaxed) }

    /// Waiters answered by another waiter's identical check, without a query of their own.
    public var sharedAnswers: Int { registry.sharedCount.load(ordering: .relaxed) }

    /// Checks running now (a waiter whose check is done is parked, or answered).
    public var checksRunning: Int { registry.checksRunning.load(ordering: .relaxed) }

    /// Times the LISTEN connection was established (1 after a quiet start, more after outages).
    public var listenerConnections: Int { listener.connections.load(ordering: .relaxed) }
}
