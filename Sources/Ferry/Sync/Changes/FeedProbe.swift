import FerryPostgres

/// One look at the feed: the sequence every reader of it takes, in one place
/// (issue 49). `since=now` is the frontier alone; any other cursor is the
/// activity check (``FeedActivity``: 410 for a cursor past the purge
/// horizon), then the page statement only when the check found something,
/// else an empty page below the check's frontier. A cursor whose id its
/// resource cannot hold is a 400 in either round trip
/// (``ChangesPlan/mappingCursorErrors(_:)``).
///
/// A poll (``poll(_:)``), a waiter's check (``waiter(_:beside:window:)``) and
/// a stream's shared check (``stream(_:guard:)``) differ only in what they
/// ask beside the two statements; those are this type's fields. Each round
/// trip runs after the plan's prelude, in one transaction as the caller: at
/// most two, one when the check finds nothing (or for `since=now`).
struct FeedProbe {
    let plan: ChangesPlan
    /// `since=now` is answered by the frontier alone, an empty page (a poll's).
    /// A waiter's check never is: a long poll with `since=now` is a poll, and
    /// an event stream from `since=now` goes on from ``frontierCursor(_:as:on:)``.
    var answersNow = false
    /// The check asks `held` (``ChangesPlan/activityStatement(waiting:)``).
    var waiting = false
    /// The check is a stream's, its guard beside it (``ChangesPlan/guardedActivityStatement``).
    var guarded = false
    /// Read in the check's round trip, after it (a waiter's scope rows).
    var beside: [PlannedStatement] = []
    /// The page's `xids` column (``SharedStreamPage``).
    var withXIDs = false
    /// The window read beside the page (``ChangesPlan/windowColumns(_:xid8:limit:)``).
    var window: [ChangesPlan.WindowTable]?
    /// Read in the page's round trip, after it (a stream's guard).
    var after: [PlannedStatement] = []

    /// A poll's probe: `since=now` at the frontier, the plain check and page.
    static func poll(_ plan: ChangesPlan) -> FeedProbe {
        FeedProbe(plan: plan, answersNow: true)
    }

    /// A waiter's check: `held` asked, `beside` read after the check, and with
    /// `window` the window read beside the page (``DefaultChecks``).
    static func waiter(_ plan: ChangesPlan, beside: [PlannedStatement], window: [ChangesPlan.WindowTable]?) -> FeedProbe {
        FeedProbe(plan: plan, waiting: true, beside: beside, window: window)
    }

    /// A stream's check for ``StreamChecks``: the guard beside an empty
    /// check, else after the page, in a later snapshot than the check's (one
    /// before the page could miss what changed in between); the page's xids.
    static func stream(_ plan: ChangesPlan, guard guardStatement: PlannedStatement) -> FeedProbe {
        FeedProbe(plan: plan, waiting: true, guarded: true, withXIDs: true, after: [guardStatement])
    }

    /// What one probe read.
    struct Look {
        let activity: FeedActivity
        let page: ChangesPage
        /// How many of each round trip's results are the prelude's.
        let prelude: Int
        /// The check's round trip: the prelude's results, the check's, then `beside`'s.
        let checked: [PostgresResult]
        /// The page's round trip, the prelude's results first; nil when the check found nothing.
        let read: [PostgresResult]?

        var checkResult: PostgresResult { checked[prelude] }
        var besideResults: ArraySlice<PostgresResult> { checked[(prelude + 1)...] }
        var pageResult: PostgresResult? { read?[prelude] }
        var afterResults: [PostgresResult] { read.map { Array($0[(prelude + 1)...]) } ?? [] }
        /// Whether a waiter waits for the frontier, and below which (``FeedProbe/held(_:page:)``).
        var held: (frontier: UInt64, held: Bool) { FeedProbe.held(activity, page: page) }
    }

    /// The probe, as `caller`. `checked` sees the check and `beside`'s results
    /// before the page is read (a waiter notes its scope rows at the check's frontier).
    func run(
        as caller: Caller, on database: PostgresGateway,
        checked: (FeedActivity, ArraySlice<PostgresResult>) throws -> Void = { _, _ in }
    ) throws -> Look {
        if answersNow && plan.request.startsNow {
            let (frontier, results) = try Self.now(as: caller, on: database)
            return Look(
                activity: FeedActivity(frontier: frontier, found: false, held: false),
                page: ChangesPage(emptyBelow: frontier, request: plan.request), prelude: 0, checked: results, read: nil)
        }
        let prelude = plan.prelude
        // Built here, once: a guarded check is nil only where no guard is (never for a stream's probe).
        let check = (guarded ? plan.guardedActivityStatement : nil) ?? plan.activityStatement(waiting: waiting)
        let results = try ChangesPlan.mappingCursorErrors { try database.asCaller(caller, prelude + [check] + beside) }
        let activity = try FeedActivity(results[prelude.count])
        try checked(activity, results[(prelude.count + 1)...])
        guard activity.found else {
            return Look(
                activity: activity, page: ChangesPage(emptyBelow: activity.frontier, request: plan.request),
                prelude: prelude.count, checked: results, read: nil)
        }
        let statement = plan.statement(withXIDs: withXIDs, window: window)
        let read = try ChangesPlan.mappingCursorErrors { try database.asCaller(caller, prelude + [statement] + after) }
        return Look(
            activity: activity, page: try ChangesPage(read[prelude.count], request: plan.request), prelude: prelude.count,
            checked: results, read: read)
    }

    /// The frontier alone, for `since=now`: every transaction below it has ended,
    /// so whatever an Index read shows afterwards includes their writes, and every
    /// later change is at or above it.
    static let frontier = PlannedStatement("SELECT ferry.feed_frontier()::text AS frontier")

    /// The cursor of this moment for `request` (`since=now`), as a poll's
    /// empty page carries it: an event stream from now goes on from it, so
    /// that its waiter's check reads from there, not from the beginning. The
    /// frontier alone, read as `caller`; no plan (its scopes and walks are
    /// the next check's).
    static func frontierCursor(_ request: ChangesRequest, as caller: Caller, on database: PostgresGateway) throws -> ChangeCursor {
        ChangesPage.frontierCursor(try now(as: caller, on: database).frontier, request: request)
    }

    /// ``frontier``'s answer, as `caller`, and its results.
    private static func now(as caller: Caller, on database: PostgresGateway) throws -> (frontier: UInt64, results: [PostgresResult]) {
        let results = try ChangesPlan.mappingCursorErrors { try database.asCaller(caller, [Self.frontier]) }
        guard let frontier = try ChangesPage.firstRow(results[0]).uint64("frontier") else { throw ChangesPage.malformed }
        return (frontier, results)
    }

    /// Whether a waiter must wait for the frontier, and below which: changes
    /// the activity check saw at or above its frontier, or changes it found
    /// below its frontier that the page, read in a later snapshot, did not
    /// bring. The frontier is not monotonic (docs/changes-feed.md, "A frontier
    /// that falls back"): the page's may sit lower than the check's, with what
    /// the check found above it. Parked without a hold, such a waiter slept
    /// until its deadline with a commit it had been woken for unsent: no hint
    /// comes again for that commit, only the frontier's passing.
    static func held(_ activity: FeedActivity, page: ChangesPage) -> (frontier: UInt64, held: Bool) {
        if activity.found && page.isEmpty { return (min(page.frontier, activity.frontier), true) }
        return (activity.frontier, activity.held)
    }
}
