import FerryPostgres

/// What the activity check (``ChangesPlan/activityStatement(waiting:)``) found,
/// read by its columns' names in one place, by ``FeedProbe``: activity, then
/// expired, then frontier, then the page when it found something.
struct FeedActivity {
    /// The feed's frontier: every transaction below it has ended.
    let frontier: UInt64
    /// Something the caller can see lies after the cursor and below the frontier.
    let found: Bool
    /// Something the caller can see lies at or above the frontier (asked only of a waiter's check).
    let held: Bool

    init(frontier: UInt64, found: Bool, held: Bool) {
        self.frontier = frontier
        self.found = found
        self.held = held
    }

    /// The check's row; 410 when the cursor is older than the purge horizon
    /// or ahead of the database.
    init(_ result: PostgresResult) throws {
        let row = try ChangesPage.firstRow(result)
        try ChangesPage.refuseUnservedCursor(row)
        guard let frontier = try row.uint64("frontier") else { throw ChangesPage.malformed }
        self.frontier = frontier
        found = try row.bool("found") == true
        held = try row.bool("held") == true
    }
}
