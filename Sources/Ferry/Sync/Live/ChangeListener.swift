import Dispatch
import FerryBase
import FerryHTTP
import FerryPostgres
import Foundation
import Glibc
import Logging
import Synchronization

/// The one PostgreSQL connection per instance that LISTENs: it turns the sync
/// triggers' NOTIFY hints (migration 0017: writes made outside Ferry) and the
/// other instances' (``HintOutbox``) into wakes of this instance's
/// waiters (``WaiterRegistry``), reloads the schema when a migration
/// announces one, watches the feed's frontier while a waiter has changes
/// it holds back, and answers the console's asks for a user's waits
/// (``WaitRoster``). It runs on a thread of its own and never on a request's path.
///
/// When the connection drops (a PostgreSQL restart, a failover,
/// `pg_terminate_backend`), it reconnects with backoff (50 ms doubling to 5 s,
/// with jitter), and meanwhile wakes every waiter each
/// `live.fallback_check_seconds`, so that a change committed during the
/// outage is found by a check instead of a hint; once it listens again it
/// wakes every waiter once more, for what committed while it was away.
final class ChangeListener: Sendable {
    private let url: String
    /// The connection's `answerTimeout` (statements only; waiting for notifications is not bounded by it).
    private let answerTimeout: Duration?
    private let schemaName: String
    private let registry: WaiterRegistry
    /// Waiters to wake again after a failed check, served on this loop's timer.
    private let retries: RetryWakes
    /// Asks for a user's waits on every instance: answered here, and the answers gathered.
    private let roster: WaitRoster
    private let fallbackSeconds: Double
    private let logger: Logger
    private let onSchemaChange: @Sendable () -> Void
    private let onUserRevoked: @Sendable (String) -> Void
    /// Told the backend of each new LISTEN connection, and 0 when it fails.
    private let onListening: @Sendable (Int32) -> Void
    /// This instance's name in ``HintOutbox``'s payloads: those it hears back are skipped.
    private let instance: String
    /// A pipe: a byte written to `wakeWrite` cuts a wait on `wakeRead` short (to
    /// stop, or to start watching the frontier). Both ends are non-blocking.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the connection listens right now (`ferry_live_listening` in /metrics).
    let listening = Atomic<Bool>(false)
    /// Times the connection was (re)established.
    let connections = Atomic<Int>(0)

    /// The channels of migration 0017.
    /// Its session's `application_name`, by which each instance's ``HintOutbox`` finds the others' listeners.
    static let applicationName = "ferry-listen"
    static let changesChannel = "ferry_changes"
    static let schemaChannel = "ferry_schema"
    /// Core migration 0027: a user disabled, or all their tokens revoked (payload: the user id).
    static let usersChannel = "ferry_users"

    init(
        url: String, answerTimeout: Duration? = nil, schemaName: String, registry: WaiterRegistry, retries: RetryWakes, roster: WaitRoster,
        fallbackSeconds: Double,
        logger: Logger,
        instance: String,
        onSchemaChange: @escaping @Sendable () -> Void, onUserRevoked: @escaping @Sendable (String) -> Void = { _ in },
        onListening: @escaping @Sendable (Int32) -> Void = { _ in }
    ) throws {
        self.instance = instance
        self.onListening = onListening
        self.url = url
        self.answerTimeout = answerTimeout
        self.schemaName = schemaName
        self.registry = registry
        self.retries = retries
        self.roster = roster
        self.fallbackSeconds = fallbackSeconds
        self.logger = logger
        self.onSchemaChange = onSchemaChange
        self.onUserRevoked = onUserRevoked
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw PostgresError(kind: .connection, message: "pipe failed: errno \(errno)") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    /// Starts the thread; it connects in the background, so a database that is
    /// down at start-up delays live wakes, not the server.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "ferry-listen"
        thread.start()
    }

    /// Stops the thread and closes the connection; waits up to 5 s for it.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        poke()
        // Left open if the thread is still inside a wait, which may yet read it.
        guard finished.wait(timeout: .now() + 5) == .success else { return }
        close(wakeRead)
        close(wakeWrite)
    }

    /// Cuts the current wait short (a waiter now waits for the frontier).
    func poke() {
        var one: UInt8 = 1
        // A full pipe already holds a wake: nothing is lost when this write fails.
        _ = write(wakeWrite, &one, 1)
    }

    private func run() {
        var backoff = 0.05
        var outageLogged = false
        while !stopping.load(ordering: .acquiring) {
            do {
                let connection = try PostgresConnection(url: url, applicationName: Self.applicationName)
                connection.answerTimeout = answerTimeout
                defer { connection.close() }
                try connection.listen([Self.changesChannel, Self.schemaChannel, Self.usersChannel, WaitRoster.channel])
                try loadTables(connection)
                listening.store(true, ordering: .releasing)
                onListening(connection.backendPID)
                connections.add(1, ordering: .relaxed)
                if outageLogged {
                    logger.notice("listening for changes again; waking every waiter once")
                    outageLogged = false
                }
                backoff = 0.05
                // Whatever committed while nobody listened sent no hint anyone heard,
                // and the retries are among everyone.
                retries.removeAll()
                registry.wakeAll()
                try listen(on: connection)
            } catch {
                listening.store(false, ordering: .releasing)
                onListening(0)
                if stopping.load(ordering: .acquiring) { break }
                if !outageLogged {
                    logger.error(
                        "the live listener's connection failed; reconnecting, waiters check every \(fallbackSeconds) s meanwhile",
                        metadata: ["error": "\(error)"])
                    outageLogged = true
                }
                waitWithFallback(backoff * Double.random(in: 0.5...1.5))
                backoff = min(backoff * 2, 5)
            }
        }
        listening.store(false, ordering: .releasing)
        onListening(0)
        finished.signal()
    }

    /// Listens until stopped; throws when the connection fails.
    private func listen(on connection: PostgresConnection) throws {
        var watch = FrontierWatch()
        while !stopping.load(ordering: .acquiring) {
            let now = MonotonicClock.now()
            let lowest = registry.lowestHeld
            var timeout = lowest == nil ? 60 : max(0, watch.nextPoll - now)
            if let due = retries.nextDue { timeout = min(timeout, max(0, due - now)) }
            let received = try connection.notifications(waitingUpTo: timeout, wakeDescriptor: wakeRead)
            drainWakes()
            var hints: [ChangeHint] = []
            var schemaChanged = false
            var answers: [String] = []
            for notification in received {
                if notification.channel == Self.schemaChannel {
                    schemaChanged = true
                } else if notification.channel == Self.usersChannel {
                    onUserRevoked(notification.payload)
                } else if notification.channel == WaitRoster.channel {
                    switch WaitRoster.message(notification.payload) {
                    case .ask(let ask):
                        if let answer = WaitRoster.answer(to: ask, instance: instance, registry: registry) { answers.append(answer) }
                    case .answer(let answer): roster.received(answer)
                    case nil: break
                    }
                } else {
                    hints += ChangeHint.hints(inPayload: notification.payload, own: instance)
                }
            }
            if schemaChanged {
                onSchemaChange()
                try loadTables(connection)
                registry.wakeAll()
            } else if !hints.isEmpty {
                registry.deliver(hints)
            }
            for answer in answers {
                _ = try connection.run("SELECT pg_catalog.pg_notify(\(bind: WaitRoster.channel), \(bind: answer))" as SQLQuery)
            }
            if let lowest = registry.lowestHeld, MonotonicClock.now() >= watch.nextPoll {
                let frontier = try Self.frontier(connection)
                watch.observed(frontier, passes: frontier > lowest)
                registry.frontierPassed(frontier)
            } else if lowest == nil {
                watch = FrontierWatch()
            }
            retries.wakeDue(now: MonotonicClock.now())
        }
    }

    /// Waits `seconds` (cut short by `stop`), waking every waiter each fallback interval.
    private func waitWithFallback(_ seconds: Double) {
        let end = MonotonicClock.now() + seconds
        var nextCheck = MonotonicClock.now() + fallbackSeconds
        while !stopping.load(ordering: .acquiring) {
            let now = MonotonicClock.now()
            if now >= nextCheck {
                registry.wakeAll()
                nextCheck = now + fallbackSeconds
            }
            guard now < end else { return }
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32((min(end, nextCheck) - now) * 1000) + 1)
            drainWakes()
        }
    }

    private func drainWakes() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &bytes, bytes.count) > 0 {}
    }

    /// The synced tables of the served schema by oid, as hints name them, and
    /// which of them are scopes.
    private func loadTables(_ connection: PostgresConnection) throws {
        let tables = try connection.run(
            """
            SELECT r.table_oid::oid::int8 AS oid, r.table_name::text AS name,
                   EXISTS (SELECT 1 FROM ferry.access_scopes s WHERE s.scope_table = r.table_oid) AS is_scope
              FROM ferry.sync_resources r WHERE r.schema_name = \(bind: schemaName)
            """)
        var byOID: [UInt32: String] = [:]
        var scopes: Set<String> = []
        let oidColumn = try tables.column("oid", as: Int64.self), nameColumn = try tables.column("name", as: String.self)
        let isScope = try tables.column("is_scope", as: Bool.self)
        for row in tables.rows {
            guard let oid = try row.decode(oidColumn), let name = try row.decode(nameColumn) else { continue }
            byOID[UInt32(truncatingIfNeeded: oid)] = name
            if try row.decode(isScope) == true { scopes.insert(name) }
        }
        registry.setTables(byOID, scopeTables: scopes)
    }

    /// The feed's frontier now (docs/changes-feed.md): every transaction below it has ended.
    static func frontier(_ connection: PostgresConnection) throws -> UInt64 {
        let result = try connection.query("SELECT ferry.feed_frontier()::text AS frontier")
        guard let frontier = try result.first?.uint64("frontier") else {
            throw PostgresError(kind: .protocolError, message: "no frontier")
        }
        return frontier
    }
}

/// When to ask for the frontier while a waiter waits for it to move: soon
/// after it started waiting, then less often while the frontier stays put (a
/// long transaction), at most once a second; soon again once it moves.
struct FrontierWatch {
    static let first = 0.005
    static let longest = 1.0
    private(set) var nextPoll = MonotonicClock.now() + FrontierWatch.first
    private var interval = FrontierWatch.first
    private var last: UInt64?

    /// The frontier was read; `passes` when it passed what a waiter waits for.
    mutating func observed(_ frontier: UInt64, passes: Bool) {
        if passes || frontier != last {
            interval = Self.first
        } else {
            interval = min(interval * 2, Self.longest)
        }
        last = frontier
        nextPoll = MonotonicClock.now() + interval
    }
}
