import FerryPostgres

/// What the activity check (``ChangesPlan/activityStatement(waiting:)``) found,
/// read by its columns' names in one place: a poll and a waiter's check
/// (``FeedCheck``) both take this path, activity, then expired, then frontier,
/// then the page (``ChangesPlan/page(after:as:on:)``).
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

    /// The check's row; 410 when the cursor is older than the purge horizon.
    init(_ result: PostgresResult) throws {
        let row = try ChangesPage.firstRow(result)
        if try row.bool("expired") == true { throw ChangesPage.expired }
        guard let frontier = try row.uint64("frontier") else { throw ChangesPage.malformed }
        self.frontier = frontier
        found = try row.bool("found") == true
        held = try row.bool("held") == true
    }
}

extension ChangesPlan {
    /// The page after `activity`: the page statement when the check found
    /// something, else an empty page below its frontier, with no second round trip.
    func page(after activity: FeedActivity, as caller: Caller, on database: PostgresGateway) throws -> ChangesPage {
        guard activity.found else { return ChangesPage(emptyBelow: activity.frontier, request: request) }
        return try ChangesPlan.mappingCursorErrors { try ChangesPage(run(statement, as: caller, on: database), request: request) }
    }
}
