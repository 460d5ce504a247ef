import Foundation
import GRDB

extension FerryStore {
    /// Runs ``RestartSweep`` over `keys`, the rows a restarted stream held that no page
    /// brought again, as the store has them now: the facts it decides on (each row's
    /// presence and waiting edits, and whether `heldElsewhere` says another source
    /// holds it), then the removal of what it decides, each with a `removed` event.
    /// The default stream's restart (``finishInitialSync()``) and a subscription's
    /// (``sweepRestart(_:stream:id:)``) differ only in what "elsewhere" means.
    static func sweepUnconfirmed(
        _ db: Database, _ keys: [RowKey], heldElsewhere: (RowKey) throws -> Bool
    ) throws -> (decision: RestartSweep.Decision, events: [SyncEvent]) {
        var (held, elsewhere, pending, exists) = (Set<RowKey>(), Set<RowKey>(), Set<RowKey>(), Set<RowKey>())
        for key in keys {
            held.insert(key)
            if try heldElsewhere(key) { elsewhere.insert(key) }
            // A row of a table the store no longer has is one it does not have.
            guard try db.tableExists(key.resource), try Self.row(db, key.resource, id: key.id) != nil else { continue }
            exists.insert(key)
            if try Self.hasPending(db, key.resource, id: key.id) { pending.insert(key) }
        }
        let decision = RestartSweep.decide(held: held, brought: [], elsewhere: elsewhere, pending: pending, exists: exists)
        var events: [SyncEvent] = []
        for key in decision.remove {
            try Self.remove(db, key.resource, id: key.id)
            events.append(.removed(resource: key.resource, id: key.id, revoked: false, discardedEdits: false))
        }
        return (decision, events)
    }
}
