@testable import FerryKit
import Foundation
import GRDB
import Testing

/// Every transition of `OutboxState`, with no database; then the statements
/// the store runs for them, on a real SQLite table.
@Suite("Outbox state")
struct OutboxStateTests {
    typealias Event = OutboxState.Event

    /// The whole table: (state, event) -> outcome; every pair not listed is nil.
    static let table: [(OutboxState, Event, OutboxState.Outcome)] = [
        (.pending, .sent, .becomes(.inflight, countsAttempt: true)),
        (.inflight, .deferred, .becomes(.pending, countsAttempt: false)),
        (.inflight, .returned, .becomes(.pending, countsAttempt: false)),
        (.inflight, .reopened, .becomes(.pending, countsAttempt: false)),
        (.pending, .settled, .leaves),
        (.inflight, .settled, .leaves),
        (.pending, .cancelled, .leaves),
        (.pending, .refused, .becomes(.rejected, countsAttempt: false)),
        (.inflight, .refused, .becomes(.rejected, countsAttempt: false)),
        (.rejected, .cleared, .leaves),
    ]

    @Test func everyPairIsAsTheTableSays() {
        for state in OutboxState.allCases {
            for event in Event.allCases {
                let expected = Self.table.first { $0.0 == state && $0.1 == event }?.2
                #expect(OutboxState.transition(state, event) == expected, "\(state) on \(event)")
            }
        }
    }

    @Test func aRejectedOperationIsNeverSentSettledOrRevivedOnlyCleared() {
        for event in Event.allCases where event != .cleared {
            #expect(OutboxState.transition(.rejected, event) == nil, "\(event)")
        }
    }

    @Test func onlyASendCountsAnAttemptAndOnlyFromPending() {
        for state in OutboxState.allCases {
            for event in Event.allCases {
                guard case .becomes(_, true)? = OutboxState.transition(state, event) else { continue }
                #expect(state == .pending && event == .sent)
            }
        }
    }

    /// The store carries an event out with one statement, so each event must
    /// have one outcome whatever state it meets.
    @Test func everyEventAppliesSomewhereWithOneOutcome() {
        for event in Event.allCases {
            let outcomes = OutboxState.allCases.compactMap { OutboxState.transition($0, event) }
            #expect(!outcomes.isEmpty, "\(event) applies to no state")
            #expect(Set(outcomes.map { "\($0)" }).count == 1, "\(event): \(outcomes)")
        }
    }

    @Test func theStatementsDoWhatTheTableSays() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE ferry_outbox (op_id TEXT PRIMARY KEY, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
                                               last_error TEXT, next_attempt_at REAL)
                    """)
            for state in OutboxState.allCases {
                for event in Event.allCases {
                    try db.execute(sql: "DELETE FROM ferry_outbox")
                    try db.execute(sql: "INSERT INTO ferry_outbox (op_id, state, last_error) VALUES ('a', ?, 'old')", arguments: [state.rawValue])
                    try db.execute(
                        sql: OutboxState.statement(event, where: "op_id = ?"),
                        arguments: FerryStore.outcomeArguments(event, error: nil, nextAttempt: Date(timeIntervalSince1970: 9)) + ["a"])
                    let row = try Row.fetchOne(db, sql: "SELECT state, attempts, last_error FROM ferry_outbox")
                    switch OutboxState.transition(state, event) {
                    case nil:
                        #expect(row?["state"] == state.rawValue && row?["attempts"] == 0, "\(state) on \(event) changed it")
                    case .leaves:
                        #expect(row == nil, "\(state) on \(event) kept it")
                    case .becomes(let next, let counts)?:
                        #expect(row?["state"] == next.rawValue && row?["attempts"] == (counts ? 1 : 0), "\(state) on \(event)")
                        #expect(row?["last_error"] == "old", "a nil error keeps the last one")
                    }
                }
            }
        }
    }

    @Test func aRowsStateFollowsItsOperations() {
        typealias RowState = FerryStore.RowState
        #expect(RowState(operations: [], conflicted: false) == .synced)
        #expect(RowState(operations: [.pending], conflicted: false) == .dirty)
        #expect(RowState(operations: [.pending], conflicted: true) == .conflict)
        #expect(RowState(operations: [.pending, .inflight], conflicted: true) == .syncing)
        #expect(RowState(operations: [.inflight, .rejected], conflicted: false) == .rejected)
    }
}
