/// Where one outbox operation stands, and what may happen to it next.
///
/// Every state change of `ferry_outbox` is an ``Event`` run through
/// ``transition(_:_:)``; the store only carries the outcome out. This file is
/// the one place the states' stored names appear.
public enum OutboxState: String, Sendable, CaseIterable, Codable {
    /// Waits to be sent.
    case pending
    /// Sent; its answer has not been applied yet.
    case inflight
    /// Refused for good: kept for the app to show, never sent again.
    case rejected

    /// What happens to an operation.
    enum Event: Sendable, CaseIterable {
        /// It goes out in a request.
        case sent
        /// No answer settled it (none came, 5xx, 429, 401, an unreadable
        /// answer): it is sent again later, under the same key.
        case deferred
        /// Back to be planned again: its row was merged after a 409/412, or a
        /// bulk call was refused and its items go alone next time.
        case returned
        /// The server took it, or what it wanted is so (a delete met 404 or 410).
        case settled
        /// It needs no request: a create deleted before it was ever sent.
        case cancelled
        /// Refused for good: by the server, by the row's tombstone, or with
        /// the parent it was made under (424).
        case refused
        /// The process died while it was in flight: the server applied it or
        /// not, and sending it again with the same key is right either way.
        case reopened
        /// The app forgot it after showing it.
        case cleared
    }

    /// What an event does to an operation in a given state.
    enum Outcome: Sendable, Equatable {
        /// It moves to `state`; `countsAttempt` for a send.
        case becomes(OutboxState, countsAttempt: Bool)
        /// It leaves the outbox.
        case leaves
    }

    /// The outcome of `event` for an operation in `state`, or nil when the
    /// event does not concern that state (the operation stays as it is). Pure:
    /// `OutboxStateTests` checks every pair.
    ///
    /// A rejected operation only ever leaves by ``Event/cleared``: nothing sends
    /// or settles it again.
    static func transition(_ state: OutboxState, _ event: Event) -> Outcome? {
        switch (state, event) {
        case (.pending, .sent): .becomes(.inflight, countsAttempt: true)
        case (.inflight, .deferred), (.inflight, .returned), (.inflight, .reopened): .becomes(.pending, countsAttempt: false)
        case (.pending, .settled), (.inflight, .settled): .leaves
        case (.pending, .cancelled): .leaves
        case (.pending, .refused), (.inflight, .refused): .becomes(.rejected, countsAttempt: false)
        case (.rejected, .cleared): .leaves
        default: nil
        }
    }

    /// The states `event` applies to, and its one outcome for all of them
    /// (each event has one, so a single statement carries it out).
    static func rule(_ event: Event) -> (from: [OutboxState], outcome: Outcome) {
        let from = allCases.filter { transition($0, event) != nil }
        // Every event applies to at least one state (checked by the tests).
        return (from, transition(from[0], event)!)
    }

    // MARK: SQL

    /// The state as an SQL string literal.
    var sql: String { "'\(rawValue)'" }

    /// `column IN (...)` for these states.
    static func sql(_ column: String, in states: [OutboxState]) -> String {
        "\(column) IN (" + states.map(\.sql).joined(separator: ", ") + ")"
    }

    /// SQL that is true for an operation still waiting to reach the server
    /// (pending or in flight, not rejected), for `ferry_outbox.state` under `column`.
    static func waiting(_ column: String = "state") -> String { "\(column) <> 'rejected'" }

    /// SQL that is true for a rejected operation.
    static func isRejected(_ column: String = "state") -> String { "\(column) = 'rejected'" }

    /// The statement that carries `event` out on the operations `filter`
    /// selects (an SQL condition over `ferry_outbox`): a DELETE when they
    /// leave, whose arguments are the filter's; else an UPDATE, whose own two
    /// arguments come first (`last_error`, kept when NULL, and
    /// `next_attempt_at`), then the filter's.
    static func statement(_ event: Event, where filter: String) -> String {
        let (from, outcome) = rule(event)
        let condition = "(\(filter)) AND " + sql("state", in: from)
        switch outcome {
        case .leaves:
            return "DELETE FROM ferry_outbox WHERE \(condition)"
        case .becomes(let state, let countsAttempt):
            return """
                UPDATE ferry_outbox SET state = \(state.sql)\(countsAttempt ? ", attempts = attempts + 1" : ""),
                       last_error = coalesce(?, last_error), next_attempt_at = ?
                 WHERE \(condition)
                """
        }
    }
}

extension FerryStore.RowState {
    /// A row's state from the states of its operations and whether a merge
    /// left it with conflicting fields.
    init(operations: [OutboxState], conflicted: Bool) {
        if operations.contains(.rejected) {
            self = .rejected
        } else if operations.contains(.inflight) {
            self = .syncing
        } else if operations.isEmpty {
            self = .synced
        } else {
            self = conflicted ? .conflict : .dirty
        }
    }
}
