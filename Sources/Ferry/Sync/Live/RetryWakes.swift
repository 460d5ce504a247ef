import FerryBase
import FerryHTTP

/// Waiters whose woken check met a passing failure (a 503: the pool busy, a statement
/// timeout, a dropped connection) and parked again, each to be woken once more when its
/// retry is due. ``ChangeListener``'s loop serves them on its own timer, beside the
/// frontier watch: no timer of their own, and one pass wakes every waiter that is due.
///
/// While the listener is down its fallback wakes every waiter anyway, so the set is
/// emptied when it connects again (``ChangeListener`` then wakes everyone once).
final class RetryWakes: Sendable {
    private struct State {
        /// By ticket: the ticket and when its retry is due (monotonic seconds).
        var due: [ObjectIdentifier: (ticket: any LiveTicket, at: Double)] = [:]
        /// The earliest `at` above, nil when empty.
        var earliest: Double?
    }

    private let state = Locked(State())

    /// Schedules `ticket`'s wake at `at`; a ticket already due keeps its earlier time.
    /// - Returns: whether this is now the earliest retry, so the listener's wait must
    ///   be cut short to serve it.
    @discardableResult
    func add(_ ticket: any LiveTicket, at: Double) -> Bool {
        state.withLock { state in
            let id = ObjectIdentifier(ticket)
            if let known = state.due[id], known.at <= at { return false }
            state.due[id] = (ticket, at)
            guard state.earliest.map({ at < $0 }) ?? true else { return false }
            state.earliest = at
            return true
        }
    }

    /// When the next retry is due, nil when none is scheduled.
    var nextDue: Double? { state.withLock { $0.earliest } }

    /// Retries scheduled now.
    var count: Int { state.withLock { $0.due.count } }

    /// Wakes, outside the lock, every ticket due at `now`, and forgets them.
    func wakeDue(now: Double) {
        let woken = state.withLock { state -> [any LiveTicket] in
            guard let earliest = state.earliest, earliest <= now else { return [] }
            var woken: [any LiveTicket] = []
            var next: Double?
            for (id, entry) in state.due {
                if entry.at <= now {
                    woken.append(entry.ticket)
                    state.due[id] = nil
                } else {
                    next = min(next ?? entry.at, entry.at)
                }
            }
            state.earliest = next
            return woken
        }
        // A ticket answered meanwhile ignores the wake.
        for ticket in woken { ticket.wake() }
    }

    /// Forgets every retry (the listener reconnected and wakes everyone).
    func removeAll() {
        state.withLock { $0 = State() }
    }
}
