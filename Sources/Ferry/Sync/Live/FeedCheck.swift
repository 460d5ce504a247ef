import FerryPostgres

/// One look at the feed for a caller who waits: the page there is now (the
/// same as a poll's), whether changes the caller can see are held back by the
/// frontier (an older transaction still runs), and, when asked, the scope rows
/// the caller can read (for ``WaiterRegistry``). At most two round trips:
/// the activity check, with the scope rows beside it, and the page when the
/// check found something.
struct FeedCheck {
    let page: ChangesPage
    /// The frontier of the activity check.
    let frontier: UInt64
    /// Changes the caller can see sit at or above `frontier`: check again once it has passed them.
    let held: Bool
    /// The caller, as the token check named them.
    let user: String?
    /// The scope rows the caller can read, when they were loaded.
    let scopes: Set<WaiterRegistry.ScopeKey>?

    /// The check for a registered waiter: another waiter's, when it made the
    /// same one late enough (``SharedChecks``), else its own.
    static func run(
        _ plan: ChangesPlan, caller: Caller, generation: Int, ticket: any LiveTicket, database: PostgresGateway,
        live: LiveFeed
    ) throws -> FeedCheck {
        let key = SharedChecks.Key(
            credential: caller.credential.hash, generation: generation, walks: plan.walks,
            since: plan.request.since.token, limit: plan.request.limit, resources: plan.request.resources,
            stream: plan.request.subscription.map { "\($0.name):\($0.id)" })
        let (check, shared) = try live.sharedChecks.check(key, ticket: ticket, registry: live.registry) {
            try run(plan, caller: caller, database: database, registry: live.registry)
        }
        if shared {
            live.registry.sharedCount.add(1, ordering: .relaxed)
            // For the request log line, which names the user its own check would have.
            if caller.trace?.userID == nil { caller.trace?.userID = check.user }
        }
        return check
    }

    /// One check, counted in `registry` (`ferry_live_checks_total`).
    static func run(_ plan: ChangesPlan, caller: Caller, database: PostgresGateway, registry: WaiterRegistry) throws -> FeedCheck {
        registry.checksRunning.add(1, ordering: .relaxed)
        defer { registry.checksRunning.subtract(1, ordering: .relaxed) }
        // A subscription's check always loads them, its stream's row with them (below).
        let loadScopes = plan.subscription != nil || registry.needsScopes(caller.trace?.userID ?? database.cachedUser(caller.credential))
        let scopeTables = loadScopes ? plan.scopeTables : []
        let statements =
            [plan.activityStatement(waiting: true)]
            + scopeTables.map { PlannedStatement("SELECT t.id::text FROM \($0.qualifiedName) t") }
        // A subscription's prelude first (public reads, its row): its results are dropped.
        let prelude = plan.prelude.count
        let results = Array(try ChangesPlan.mappingCursorErrors { try database.asCaller(caller, plan.prelude + statements) }.dropFirst(prelude))
        let activity = try FeedActivity(results[0])
        var scopes: Set<WaiterRegistry.ScopeKey>?
        if loadScopes {
            var keys: Set<WaiterRegistry.ScopeKey> = []
            for (index, table) in scopeTables.enumerated() {
                for row in results[1 + index].rows {
                    if let id = row[0] { keys.insert(WaiterRegistry.ScopeKey(scope: table.name, id: id)) }
                }
            }
            // A subscriber learns of its stream's row (public, so not among
            // the scope rows above): hints of that row wake the user.
            if let subscription = plan.subscription, plan.scopes.contains(where: { $0.scope == subscription.root }) {
                keys.insert(WaiterRegistry.ScopeKey(scope: subscription.root, id: subscription.id))
            }
            scopes = keys
        }
        let page = try plan.page(after: activity, as: caller, on: database)
        registry.checkCount.add(1, ordering: .relaxed)
        return FeedCheck(page: page, frontier: activity.frontier, held: activity.held, user: caller.trace?.userID, scopes: scopes)
    }
}
