import Foundation
import GRDB

/// Tells continuous mode that the app wrote: after each committed transaction
/// that added an operation to `ferry_outbox`.
///
/// Only the synced tables' triggers insert there (``LocalTriggers``), for every
/// write the app makes, through the store or with GRDB on
/// ``FerryStore/database``; FerryKit's own bookkeeping only updates and
/// deletes. So an insert is exactly "something new to upload", and a rolled
/// back write tells nothing.
///
/// `@unchecked Sendable`: GRDB calls every method on the store's writer
/// queue, one at a time, and `inserted` is touched nowhere else.
final class OutboxObserver: TransactionObserver, @unchecked Sendable {
    private let wrote: @Sendable () -> Void
    private var inserted = false

    init(wrote: @escaping @Sendable () -> Void) { self.wrote = wrote }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        if case .insert(let table) = eventKind { return table == "ferry_outbox" }
        return false
    }

    func databaseDidChange(with event: DatabaseEvent) { inserted = true }

    func databaseDidCommit(_ db: Database) {
        guard inserted else { return }
        inserted = false
        wrote()
    }

    func databaseDidRollback(_ db: Database) { inserted = false }
}
