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
/// here they leave the writer's path (``publish(_:)`` only appends to a buffer).
///
/// Whatever arrives while a NOTIFY is on its way, or within ``sendInterval``
/// of the last, goes in the next one: at most one NOTIFY transaction per
/// interval per instance, each carrying every hint since the last, in payloads
/// of `@<instance>` and one hint a line (the listener skips its own instance's,
/// which it delivered already). This instance's own waiters are woken at once;
/// only the other instances' learn up to one interval later. Without the pause,
/// eight busy writers sent a NOTIFY per 1.1 PATCHes (bench/feed/README.md): a
/// transaction, a queue lock and a wake-up of every listener each. When the connection
/// fails the hints wait (folded into one for everyone past 64 kB) and go once
/// it is back: the other instances then learn late, never not at all.
final class HintOutbox: Sendable {
    /// This process's name in the payloads it sends.
    let instance = UUID().uuidString.lowercased()
    private let url: String
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

    /// The least time between two NOTIFY transactions of this instance: the most
    /// a waiter of another instance waits beyond its own instance's waiters, well
    /// inside the live feed's p50 goal of 10 ms.
    static let sendInterval = 0.005
    /// A payload of PostgreSQL's NOTIFY must stay under 8000 bytes.
    static let payloadLimit = 7_000
    /// Past this many bytes of unsent hints (the connection is down), they fold into one for everyone.
    static let foldLimit = 65_536
    /// The hint that wakes every waiter following anything.
    static let everyone = "0 0 *"

    private struct Pending {
        var text = ""
        var signalled = false
    }

    init(url: String, registry: WaiterRegistry, logger: Logger) {
        self.url = url
        self.registry = registry
        self.logger = logger
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

    /// The hints a committed transaction collected (`ferry.hints`: one a line).
    /// Called by the writer right after its commit; returns at once.
    func publish(_ text: String) {
        guard !text.isEmpty, !stopping.load(ordering: .relaxed) else { return }
        let signal = pending.withLock { pending -> Bool in
            pending.text += text.hasSuffix("\n") ? text : text + "\n"
            // The thread is behind (or not started): one hint for everyone says as much, in bounded memory.
            if pending.text.utf8.count > Self.foldLimit { pending.text = Self.everyone + "\n" }
            defer { pending.signalled = true }
            return !pending.signalled
        }
        if signal { ready.signal() }
    }

    private func take() -> String {
        pending.withLock { pending in
            defer {
                pending.text = ""
                pending.signalled = false
            }
            return pending.text
        }
    }

    private func run() {
        var connection: PostgresConnection?
        var unsent = ""
        var backoff = 0.05
        var nextSend = DispatchTime.now()
        while true {
            let stop = stopping.load(ordering: .acquiring)
            if !stop {
                // Woken by a publish while the interval runs: its waiters here are woken now, and its
                // hints wait for the interval's end with the rest.
                if unsent.isEmpty {
                    ready.wait()
                } else if DispatchTime.now() < nextSend {
                    _ = ready.wait(timeout: nextSend)
                }
            }
            let text = take()
            if !text.isEmpty {
                let lines = ChangeHint.lines(text)
                published.add(lines.count, ordering: .relaxed)
                registry.deliver(lines.map { ChangeHint(payload: $0) ?? ChangeHint.everyone })
                unsent += text
                if unsent.utf8.count > Self.foldLimit { unsent = Self.everyone + "\n" }
            }
            if !unsent.isEmpty && (stop || DispatchTime.now() >= nextSend) {
                do {
                    let sending = try connection ?? PostgresConnection(url: url, applicationName: "ferry-hints")
                    connection = sending
                    try send(unsent, on: sending)
                    unsent = ""
                    backoff = 0.05
                    nextSend = .now() + Self.sendInterval
                } catch {
                    connection?.close()
                    connection = nil
                    if stop { break }
                    logger.warning(
                        "could not send live hints to the other instances; retrying",
                        metadata: ["error": "\(error)", "pending_bytes": "\(unsent.utf8.count)"])
                    // A publish during the pause cuts it short; that is harmless (its text is taken next).
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

    /// One NOTIFY transaction with every hint of `text`, in as few payloads as fit.
    private func send(_ text: String, on connection: PostgresConnection) throws {
        let payloads = Self.payloads(text, instance: instance)
        _ = try connection.run(
            "SELECT pg_catalog.pg_notify('ferry_changes', p) FROM pg_catalog.unnest(\(bind: .texts(payloads))::pg_catalog.text[]) p")
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
