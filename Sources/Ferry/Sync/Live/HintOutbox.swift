import Dispatch
import FerryBase
import FerryPostgres
import Foundation
import Logging
import Synchronization

/// The hints of this instance's own commits (core 0028), after the commit:
/// its waiters are woken, and one background connection sends them to the
/// other instances. A write through Ferry collects its hints in its
/// transaction (`ferry.hint_mode = collect`) instead of notifying, because
/// PostgreSQL serialises the commits of notifying transactions on one lock;
/// here they leave the writer's path.
///
/// ``publish(_:collected:)`` runs on the writer's thread right after its commit: it
/// marks the waiters the hints concern (``WaiterRegistry/woken(by:)``), wakes
/// up to ``writerWakes`` of them itself, and leaves the hints in a buffer. The
/// hints Ferry made of its rows arrive as values and stay values until a send
/// writes them out (``UnsentHints``; never, for a lone instance): only the text
/// the triggers collected is parsed on the writer's path (bench/feed/README.md,
/// "stop 21").
/// The sender's thread wakes the rest of a fan-out at once, and sends what the
/// buffer holds at most once per ``sendInterval``, in one NOTIFY transaction
/// of payloads of `@<instance>` and one hint a line (the listener skips its
/// own instance's, which it delivered already). A write that wakes nobody
/// beyond the writer's share does not wake the thread while an interval runs:
/// busy writers cost the thread one wake per interval, not one per commit
/// (bench/feed/README.md, "stop 16"). This instance's own waiters are woken
/// at once; only the other instances' learn up to one interval later. When the
/// connection fails the hints wait (folded into one for everyone past 64 kB)
/// and go once it is back: the other instances then learn late, never not at all.
///
/// **A lone instance sends nothing** (issue 47 item 4): nobody else listens, and
/// each NOTIFY costs a transaction and a wake of this instance's own listener,
/// ~10 µs of CPU a PATCH at 8 writers (bench/feed/README.md). Before a send, at
/// most once per ``peerCheckInterval``, the thread asks `pg_stat_activity` for
/// the other instances' listeners (sessions named `ferry-listen` in this
/// database besides this instance's own, ``listenerBackend``). Hints taken
/// before a check that finds none are dropped; hints published after it are
/// held until the next check, never dropped on an older answer, so an instance
/// that starts beside a lone one hears its commits at most one interval late,
/// in its first second. While this instance's listener is down (or its session
/// is named otherwise, by `live.listen_url`), every hint is sent.
final class HintOutbox: Sendable {
    /// This process's name in the payloads it sends.
    let instance = UUID().uuidString.lowercased()
    private let url: String
    /// The sender connection's `answerTimeout`: a frozen server holds the hints back, not the thread for ever.
    private let answerTimeout: Duration?
    private let registry: WaiterRegistry
    private let logger: Logger
    private let pending = Locked(Pending())
    private let ready = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    /// Hints published by this instance's writes (lines, before folding).
    let published = Atomic<Int>(0)
    /// NOTIFY transactions sent to the other instances.
    let notifies = Atomic<Int>(0)
    /// Times the sender's thread woke (for tests: one per interval under busy writers, not one per commit).
    let rounds = Atomic<Int>(0)
    /// The backend of this instance's LISTEN connection (``ChangeListener``), 0 while it is down.
    let listenerBackend = Atomic<Int32>(0)
    /// Times the thread asked whether other instances listen.
    let peerChecks = Atomic<Int>(0)
    /// Other instances' listeners at the last check; -1 before the first.
    let peers = Atomic<Int>(-1)
    /// Hints dropped because no other instance listened (lines).
    let unsentAlone = Atomic<Int>(0)
    /// The least time between two checks for other instances' listeners: the most a
    /// new instance beside a lone one waits for its hints, in its first interval.
    let peerCheckInterval: Double

    /// The least time between two NOTIFY transactions of this instance: the most
    /// a waiter of another instance waits beyond its own instance's waiters, well
    /// inside the live feed's p50 goal of 10 ms.
    static let sendInterval = 0.005
    /// The most waiters a writer's thread wakes itself after its commit; the sender's
    /// thread wakes the rest, so that a write to a set 10,000 devices follow does not
    /// keep its own answer waiting for the fan-out.
    static let writerWakes = 16
    /// A payload of PostgreSQL's NOTIFY must stay under 8000 bytes.
    static let payloadLimit = 7_000

    private struct Pending {
        var hints = UnsentHints()
        /// Woken waiters the writers left to this thread (a fan-out's rest).
        var tickets: [any LiveTicket] = []
        /// A signal is on its way to the thread (cleared when it takes what is here).
        var signalled = false
        /// The thread waits with nothing to send: the next text wakes it.
        var idle = false
    }

    init(url: String, registry: WaiterRegistry, logger: Logger, peerCheckInterval: Double = 1, answerTimeout: Duration? = nil) {
        self.url = url
        self.answerTimeout = answerTimeout
        self.registry = registry
        self.logger = logger
        self.peerCheckInterval = peerCheckInterval
    }

    /// Starts the sender's thread.
    func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "ferry-hints"
        thread.start()
    }

    /// Stops the thread (after sending what it holds, if it can); waits up to 5 s.
    func stop() {
        guard started.load(ordering: .acquiring), !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        ready.signal()
        _ = finished.wait(timeout: .now() + 5)
    }

    /// The hints of a committed transaction: those Ferry made of the rows it wrote
    /// (``RowHints``) and the text its triggers collected (`ferry.hints`: one a line).
    /// Called by the writer right after its commit: wakes this instance's waiters
    /// they concern (up to ``writerWakes`` on this thread) and leaves the hints for
    /// the other instances to the sender's thread.
    func publish(_ made: [ChangeHint], collected: String = "") {
        guard !made.isEmpty || !collected.isEmpty, !stopping.load(ordering: .relaxed) else { return }
        var hints = made
        if !collected.isEmpty { hints += ChangeHint.lines(collected).map { ChangeHint(payload: $0) ?? ChangeHint.everyone } }
        published.add(hints.count, ordering: .relaxed)
        let woken = registry.woken(by: hints)
        registry.wake(woken.prefix(Self.writerWakes))
        let rest = woken.dropFirst(Self.writerWakes)
        let signal = pending.withLock { pending -> Bool in
            pending.hints.add(collected: collected, made: made)
            pending.tickets += rest
            // While an interval runs the thread wakes at its end anyway; only waiters to wake cut it short.
            guard !pending.signalled, pending.idle || !rest.isEmpty else { return false }
            pending.signalled = true
            pending.idle = false
            return true
        }
        if signal { ready.signal() }
    }

    /// What the writers left: the hints to send, and waiters to wake.
    private func take() -> (hints: UnsentHints, tickets: [any LiveTicket]) {
        pending.withLock { pending in
            defer {
                pending.hints = UnsentHints()
                pending.tickets = []
                pending.signalled = false
            }
            return (pending.hints, pending.tickets)
        }
    }

    /// Whether nothing waits to be sent or woken; if so, the thread is marked idle
    /// (under the same lock), so that the next publish wakes it.
    private func idle(unsent: UnsentHints) -> Bool {
        pending.withLock { pending in
            guard unsent.isEmpty, pending.hints.isEmpty, pending.tickets.isEmpty else { return false }
            pending.idle = true
            return true
        }
    }

    private func run() {
        var connection: PostgresConnection?
        var unsent = UnsentHints()
        var backoff = 0.05
        var nextSend = DispatchTime.now()
        // The last check for other instances' listeners: when it began, and whether it found none.
        var checked: DispatchTime?
        var alone = false
        while true {
            let stop = stopping.load(ordering: .acquiring)
            if !stop {
                if idle(unsent: unsent) {
                    ready.wait()
                } else if DispatchTime.now() < nextSend {
                    // Until the interval ends; a fan-out's rest (or the stop) cuts it short.
                    _ = ready.wait(timeout: nextSend)
                }
            }
            rounds.add(1, ordering: .relaxed)
            let (hints, tickets) = take()
            registry.wake(tickets)
            unsent.add(hints)
            if !unsent.isEmpty && (stop || DispatchTime.now() >= nextSend) {
                // A connection kept since the last send may have been closed meanwhile
                // (PostgreSQL restarted): that costs one new connection, not a warning.
                let kept = connection != nil
                do {
                    let sending = try connection ?? Self.connect(url, answerTimeout: answerTimeout)
                    connection = sending
                    let now = DispatchTime.now()
                    if !stop, checked.map({ now >= $0 + peerCheckInterval }) ?? true {
                        // Everything in `unsent` was taken before this check began.
                        checked = now
                        alone = try isAlone(on: sending)
                        if alone {
                            unsentAlone.add(unsent.count, ordering: .relaxed)
                            unsent = UnsentHints()
                        }
                    } else if !stop, alone, let checked {
                        // Published after the last check, which cannot vouch for them: held until the next.
                        nextSend = checked + peerCheckInterval
                        continue
                    }
                    if !unsent.isEmpty { try send(unsent.written, on: sending) }
                    unsent = UnsentHints()
                    backoff = 0.05
                    nextSend = .now() + Self.sendInterval
                } catch {
                    connection?.close()
                    connection = nil
                    if stop { break }
                    // At once, on a new connection; only its failure is news.
                    if kept, (error as? PostgresError)?.kind == .connection { continue }
                    logger.warning(
                        "could not send live hints to the other instances; retrying",
                        metadata: ["error": "\(error)", "pending_bytes": "\(unsent.bytes)"])
                    // A publish during the pause may cut it short; that is harmless (its text is taken next).
                    _ = ready.wait(timeout: .now() + backoff * Double.random(in: 0.5...1.5))
                    backoff = min(backoff * 2, 5)
                    continue
                }
            }
            if stop { break }
        }
        connection?.close()
        finished.signal()
    }

    /// The sender's connection. Its statements are prepared once (parsed and planned
    /// once, not per NOTIFY): `live.listen_url` reaches PostgreSQL itself, never a
    /// transaction pooler (docs/CONFIGURATION.md).
    static func connect(_ url: String, answerTimeout: Duration?) throws -> PostgresConnection {
        let connection = try PostgresConnection(url: url, applicationName: "ferry-hints", preparedStatements: true)
        connection.answerTimeout = answerTimeout
        return connection
    }

    /// Whether no other instance listens: this instance's listener is up and named
    /// `ferry-listen`, and no other session of this database is. Sessions of every role
    /// show their `application_name` in `pg_stat_activity`.
    private func isAlone(on connection: PostgresConnection) throws -> Bool {
        let own = listenerBackend.load(ordering: .acquiring)
        peerChecks.add(1, ordering: .relaxed)
        let row = try connection.run(
            """
            SELECT count(*) FILTER (WHERE pid = \(bind: String(own))::pg_catalog.int4) AS own,
                   count(*) FILTER (WHERE pid <> \(bind: String(own))::pg_catalog.int4) AS others
              FROM pg_catalog.pg_stat_activity
             WHERE datname = pg_catalog.current_database() AND application_name = \(bind: ChangeListener.applicationName)
            """
        ).first
        let others = try row?.int("others") ?? 0
        let ownListening = try row?.int("own") ?? 0
        peers.store(others, ordering: .relaxed)
        return own != 0 && ownListening == 1 && others == 0
    }

    /// One NOTIFY transaction with every hint of `text`, in as few payloads as fit.
    private func send(_ text: String, on connection: PostgresConnection) throws {
        let payloads = Self.payloads(text, instance: instance)
        if payloads.count == 1 {
            // The usual case (a payload holds ~100 hints): the text as it is, no array to quote and parse.
            _ = try connection.run("SELECT pg_catalog.pg_notify('ferry_changes', \(bind: payloads[0])::pg_catalog.text)")
        } else {
            _ = try connection.run(
                "SELECT pg_catalog.pg_notify('ferry_changes', p) FROM pg_catalog.unnest(\(bind: .texts(payloads))::pg_catalog.text[]) p")
        }
        notifies.add(1, ordering: .relaxed)
    }

    /// `text`'s lines as payloads of `@<instance>` and then one hint a line, each under ``payloadLimit``.
    static func payloads(_ text: String, instance: String) -> [String] {
        let head = "@" + instance
        var payloads: [String] = []
        var current = head
        for line in ChangeHint.lines(text) {
            if current.utf8.count + line.utf8.count + 1 > payloadLimit, current != head {
                payloads.append(current)
                current = head
            }
            current += "\n" + line
        }
        if current != head { payloads.append(current) }
        return payloads
    }
}
