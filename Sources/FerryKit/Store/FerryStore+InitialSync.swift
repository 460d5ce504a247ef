import Foundation
import GRDB

/// What an initial sync has done so far, kept in `ferry_state` with the rows
/// each page brought, so that a crash or a lost connection resumes it at the
/// page after the last one applied instead of starting over.
///
/// Keys: `initial_cursor` (the feed cursor taken before the first Index
/// request), `initial_done` (finished steps, one per line), `initial_step` and
/// `initial_next` (the step under way and its next page's path).
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
        try database.write { db in
            try Self.clearInitialSync(db)
            try Self.saveState(db, "initial_cursor", cursor)
        }
    }

    /// Applies one Index page of `step` and, in the same transaction, where the
    /// step goes on from: `next`, or the step done when there is no next page.
    func applyIndexPage(_ rows: [(resource: String, data: RowData)], step: String, next: String?,
                        resolve: @Sendable (String) -> ThreeWayMerge.Resolver?) throws -> [SyncEvent] {
        try database.write { db in
            let events = try Self.applyRemote(db, rows, resolve: resolve)
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
        try database.write { db in
            try db.execute(sql: "DELETE FROM ferry_state WHERE key IN ('initial_step', 'initial_next')")
        }
    }

    /// Marks a step done without rows (the server refused to list it).
    func skipStep(_ step: String) throws {
        try database.write { db in try Self.markStepDone(db, step) }
    }

    /// Every step is done: the changes feed takes over from the cursor taken
    /// before the first Index page, so nothing committed meanwhile is missed.
    func finishInitialSync() throws {
        try database.write { db in
            guard let cursor = try Self.loadState(db, "initial_cursor") else { return }
            try Self.saveState(db, "cursor", cursor)
            try Self.clearInitialSync(db)
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
    }
}
