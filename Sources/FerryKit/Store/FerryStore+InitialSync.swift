import Foundation
import GRDB

/// What an initial sync has done so far, kept in `ferry_state` with the rows
/// each page brought, so that a crash or a lost connection resumes it at the
/// page after the last one applied instead of starting over.
///
/// Keys: `initial_cursor` (the feed cursor taken before the first Index
/// request), `initial_done` (finished steps, one per line), `initial_step` and
/// `initial_next` (the step under way and its next page's path).
///
/// Rows the store already held as synced when the cursor was taken (uploads
/// acknowledged before a first initial sync) are listed in
/// `ferry_unconfirmed`: the server may have deleted them before the cursor (a
/// set deleted with its terms, another device), and the feed from the cursor
/// will not say so. Each Index page confirms the rows it brings; what is
/// still unconfirmed when every step is done is gone from the server, and
/// goes here too. Rows a subscription brought are not the default stream's
/// to confirm (the Index leaves public rows out): they stay the stream's.
extension FerryStore {
    struct InitialSyncState: Equatable {
        var cursor: String?
        var done: Set<String> = []
        var step: String?
        var next: String?
    }

    func initialSyncState() throws -> InitialSyncState {
        try database.read { db in
            InitialSyncState(
                cursor: try Self.loadState(db, "initial_cursor"),
                done: Set((try Self.loadState(db, "initial_done") ?? "").split(separator: "\n").map(String.init)),
                step: try Self.loadState(db, "initial_step"),
                next: try Self.loadState(db, "initial_next"))
        }
    }

    /// Records the feed cursor that the changes feed follows from once every step is done.
    func beginInitialSync(cursor: String) throws {
        try ferryWrite { db in
            try Self.clearInitialSync(db)
            try Self.saveState(db, "initial_cursor", cursor)
            guard let schema = try Self.schema(db) else { return }
            for resource in schema.resources where try db.tableExists(resource.name) {
                try db.execute(
                    sql: """
                        INSERT INTO ferry_unconfirmed (resource, id)
                        SELECT ?, id FROM \(LocalSchema.quote(resource.name))
                         WHERE id NOT IN (SELECT row_id FROM ferry_outbox WHERE resource = ? AND \(OutboxState.waiting()))
                           AND id NOT IN (SELECT id FROM ferry_subscription_row WHERE resource = ? AND stream <> '')
                        """, arguments: [resource.name, resource.name, resource.name])
            }
        }
    }

    /// Applies one Index page of `step` and, in the same transaction, where the
    /// step goes on from: `next`, or the step done when there is no next page.
    func applyIndexPage(
        _ rows: [(resource: String, data: RowData)], step: String, next: String?,
        resolve: @Sendable (String) -> ThreeWayMerge.Resolver?
    ) throws -> [SyncEvent] {
        try ferryWrite { db in
            let events = try Self.applyRemote(db, rows, resolve: resolve)
            try Self.markDefault(db, rows)
            try Self.confirm(db, rows)
            if let next {
                try Self.saveState(db, "initial_step", step)
                try Self.saveState(db, "initial_next", next)
            } else {
                try Self.markStepDone(db, step)
            }
            return events
        }
    }

    /// The step's snapshot is gone (expired or lost): it starts again at page 1.
    /// Rows already applied stay; the new snapshot brings them again, and they
    /// apply by revision.
    func restartStep() throws {
        try ferryWrite { db in
            try db.execute(sql: "DELETE FROM ferry_state WHERE key IN ('initial_step', 'initial_next')")
        }
    }

    /// Marks a step done without rows (the server refused to list it). Its
    /// resource's rows cannot be confirmed, so none of them is taken for gone.
    func skipStep(_ step: DownloadStep) throws {
        try ferryWrite { db in
            try db.execute(sql: "DELETE FROM ferry_unconfirmed WHERE resource = ?", arguments: [step.resource])
            try Self.markStepDone(db, step.key)
        }
    }

    /// Every step is done: the changes feed takes over from the cursor taken
    /// before the first Index page, so nothing committed meanwhile is missed.
    /// Rows held before the cursor that no page brought back, that no subscription
    /// holds and that have no local edit pending, are removed (each with a
    /// ``SyncEvent/removed``; ``RestartSweep``).
    func finishInitialSync() throws -> [SyncEvent] {
        try ferryWrite { db in
            guard let cursor = try Self.loadState(db, "initial_cursor") else { return [] }
            // What the pages left unconfirmed; a row a subscription holds is that stream's to decide.
            let subscribed = try db.cachedStatement(
                sql: "SELECT EXISTS (SELECT 1 FROM ferry_subscription_row WHERE resource = ? AND id = ? AND stream <> '')")
            let keys = try GRDB.Row.fetchAll(db, sql: "SELECT resource, id FROM ferry_unconfirmed").map {
                RowKey(resource: $0["resource"], id: $0["id"])
            }
            let (_, events) = try Self.sweepUnconfirmed(db, keys) { key in
                try Bool.fetchOne(subscribed, arguments: [key.resource, key.id]) == true
            }
            try Self.saveState(db, "cursor", cursor)
            try Self.clearInitialSync(db)
            return events
        }
    }

    /// The rows of an Index page exist on the server.
    static func confirm(_ db: Database, _ rows: [(resource: String, data: RowData)]) throws {
        // Nearly always empty: a store's first sync starts with no rows.
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM ferry_unconfirmed)")) == true else { return }
        let statement = try db.cachedStatement(sql: "DELETE FROM ferry_unconfirmed WHERE resource = ? AND id = ?")
        for row in rows {
            guard let id = row.data["id"]?.string ?? row.data["id"]?.int.map(String.init) else { continue }
            try statement.execute(arguments: [row.resource, id])
        }
    }

    static func markStepDone(_ db: Database, _ step: String) throws {
        var done = (try loadState(db, "initial_done") ?? "").split(separator: "\n").map(String.init)
        if !done.contains(step) { done.append(step) }
        try saveState(db, "initial_done", done.joined(separator: "\n"))
        try db.execute(sql: "DELETE FROM ferry_state WHERE key IN ('initial_step', 'initial_next')")
    }

    static func clearInitialSync(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM ferry_state WHERE key IN ('initial_cursor', 'initial_done', 'initial_step', 'initial_next')")
        try db.execute(sql: "DELETE FROM ferry_unconfirmed")
    }
}
