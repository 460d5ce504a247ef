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

    /// This check with its page as `page` (the same page, encoded once for all who take it).
    func with(page: ChangesPage) -> FeedCheck {
        FeedCheck(page: page, frontier: frontier, held: held, user: user, scopes: scopes)
    }

    /// This check as `user` takes it from the waiter who made it: the same page,
    /// frontier and hold, and no scope rows (they were the maker's).
    func taken(by user: String) -> FeedCheck {
        FeedCheck(page: page, frontier: frontier, held: held, user: user, scopes: nil)
    }

    /// The check for a registered waiter: another waiter's, when it made the
    /// same one late enough (``SharedChecks``), else its own.
    static func run(
        _ plan: ChangesPlan, caller: Caller, generation: Int, ticket: any LiveTicket, database: PostgresGateway,
        live: LiveFeed
    ) throws -> FeedCheck {
        if plan.sharesPages, let subscription = plan.request.subscription {
            // A stream's waiters share checks across users (``StreamChecks``).
            let key = StreamChecks.Key(
                generation: generation, stream: "\(subscription.name):\(subscription.id)", limit: plan.request.limit,
                resources: plan.request.resources)
            let root = WaiterRegistry.ScopeKey(scope: plan.subscription?.root ?? "", id: subscription.id)
            let (check, shared) = try live.streamChecks.check(
                key, request: plan.request, token: caller.credential.tokenHash,
                user: { database.cachedUser(caller.credential) },
                recheck: { recent in
                    lookUpTokens(
                        { live.registry.tokens(onStream: root) }, recent: recent, caller: caller, database: database, registry: live.registry)
                }, ticket: ticket, registry: live.registry,
                run: {
                    // Written only for a check of its own: most of a stream's waiters take another's page.
                    guard let guardStatement = plan.streamGuard else { throw Self.noGuard }
                    return try runStream(plan, guard: guardStatement, caller: caller, database: database, registry: live.registry)
                })
            if shared {
                live.registry.sharedCount.add(1, ordering: .relaxed)
                if caller.trace?.userID == nil { caller.trace?.userID = check.user }
            }
            return check
        }
        let key = SharedChecks.Key(
            credential: caller.credential.hash, generation: generation, walks: plan.walks,
            since: plan.request.since.token, limit: plan.request.limit, resources: plan.request.resources,
            stream: plan.request.subscription.map { "\($0.name):\($0.id)" })
        let (check, shared) = try live.sharedChecks.check(key, ticket: ticket, registry: live.registry) {
            guard let window = plan.windowTables else { return try run(plan, caller: caller, database: database, registry: live.registry) }
            // Other users' default streams may have asked the same (``DefaultChecks``).
            let defaultKey = DefaultChecks.Key(
                generation: generation, since: plan.request.since.token, limit: plan.request.limit, resources: plan.request.resources)
            let (check, shared) = try live.defaultChecks.check(
                defaultKey, since: plan.request.since.afterXID, token: caller.credential.tokenHash,
                user: { database.cachedUser(caller.credential) },
                recheck: { recent in
                    lookUpTokens({ live.registry.defaultTokens() }, recent: recent, caller: caller, database: database, registry: live.registry)
                }, ticket: ticket, registry: live.registry
            ) {
                try run(
                    plan, caller: caller, database: database, registry: live.registry,
                    window: (window, live.defaultChecks, generation))
            }
            if shared {
                live.registry.defaultSharedCount.add(1, ordering: .relaxed)
                live.registry.sharedCount.add(1, ordering: .relaxed)
                if caller.trace?.userID == nil { caller.trace?.userID = check.user }
            }
            return check
        }
        if shared {
            live.registry.sharedCount.add(1, ordering: .relaxed)
            // For the request log line, which names the user its own check would have.
            if caller.trace?.userID == nil { caller.trace?.userID = check.user }
        }
        return check
    }

    /// One bulk lookup of the tokens of the waiters `waiting` names and of the
    /// bearers that asked lately (`recent`), for the shared checks of a
    /// stream's waiters or of the default stream's (``CheckShelf/recheckOnce(_:_:)``),
    /// counted in `registry`. A waiter without a token leads none. A failed
    /// lookup leaves the cache as it was and vouches for nobody: each waiter
    /// then checks for itself.
    static func lookUpTokens(
        _ waiting: () -> [String], recent: [String], caller: Caller, database: PostgresGateway, registry: WaiterRegistry
    ) -> TokenVouchers {
        guard caller.credential.tokenHash != nil else { return .none }
        let lookup = try? database.recheck(tokens: Array(Set(waiting()).union(recent)))
        registry.countLookup(lookup)
        return lookup ?? .none
    }

    /// ``ChangesPlan/sharesPages`` said yes and ``ChangesPlan/streamGuard`` no: a bug.
    static let noGuard = Problem(500, .internalError, "a stream that shares pages has no guard")

    /// One check, counted in `registry` (`ferry_live_checks_total`).
    static func run(_ plan: ChangesPlan, caller: Caller, database: PostgresGateway, registry: WaiterRegistry) throws -> FeedCheck {
        try run(plan, caller: caller, database: database, registry: registry, window: nil).check
    }

    /// One check, counted in `registry`; with `window`, a default-stream
    /// check that other users' waiters may take (``DefaultChecks``): its page
    /// reads the window beside it, and the scope rows its caller reads are
    /// loaded whenever the evidence of them is not past the cursor.
    static func run(
        _ plan: ChangesPlan, caller: Caller, database: PostgresGateway, registry: WaiterRegistry,
        window: (tables: [ChangesPlan.WindowTable], checks: DefaultChecks, generation: Int)?
    ) throws -> (check: FeedCheck, window: DefaultWindow?) {
        registry.checksRunning.add(1, ordering: .relaxed)
        defer { registry.checksRunning.subtract(1, ordering: .relaxed) }
        let named = caller.trace?.userID ?? database.cachedUser(caller.credential)
        // A subscription's waiter is woken by its stream's root row (``WaiterRegistry``), not by the user's scope rows.
        let loadScopes =
            plan.subscription == nil
            && (registry.needsScopes(named)
                || window.map { $0.checks.wantsScopes(named, generation: $0.generation, since: plan.request.since.afterXID) } == true)
        let scopeTables = loadScopes ? plan.scopeTables : []
        let probe = FeedProbe.waiter(
            plan, beside: scopeTables.map { Self.scopeRows($0, readThrough: plan.readThrough) }, window: window?.tables)
        var scopes: Set<WaiterRegistry.ScopeKey>?
        let look = try probe.run(as: caller, on: database) { activity, rows in
            guard loadScopes else { return }
            var keys: Set<WaiterRegistry.ScopeKey> = []
            var owned: Set<WaiterRegistry.ScopeKey> = []
            for (table, result) in zip(scopeTables, rows) {
                let idColumn = try result.column("id", as: String.self)
                let ownedColumn = try result.column("owned", as: Bool.self)
                for row in result.rows {
                    guard let id = try row.decode(idColumn) else { continue }
                    let key = WaiterRegistry.ScopeKey(scope: table.name, id: id)
                    keys.insert(key)
                    if try row.decode(ownedColumn) == true { owned.insert(key) }
                }
            }
            scopes = keys
            // Read after the activity check: whatever they missed has an xid at or above its frontier.
            if let window, let user = caller.trace?.userID ?? database.cachedUser(caller.credential) {
                window.checks.note(user, generation: window.generation, scopes: keys, owned: owned, frontier: activity.frontier)
            }
        }
        var read: DefaultWindow?
        if let window, let result = look.pageResult {
            read = try DefaultWindow(
                ChangesPage.firstRow(result), tables: window.tables, followed: plan.request.resources, frontier: look.page.frontier)
        }
        registry.checkCount.add(1, ordering: .relaxed)
        let (frontier, held) = look.held
        return (FeedCheck(page: look.page, frontier: frontier, held: held, user: caller.trace?.userID, scopes: scopes), read)
    }

    /// The scope rows of `table` the caller reads, each with whether they read
    /// it as its owner (by a `.caller` path of the rules); the others they read
    /// as a member (``DefaultWindow``).
    ///
    /// Found through the rules' read paths, as the feed finds its rows, where
    /// the table has them: Row Level Security alone would test every row of
    /// the table, so that a user's first check cost the table, not their own
    /// scope rows (0.47 s for a table of 100,000 public sets, none of them the
    /// user's; bench/public-sets). The policy still filters what the paths
    /// reach. A table without paths is read whole under its policy, as before.
    static func scopeRows(_ table: Resource, readThrough: ReadThrough) -> PlannedStatement {
        let paths = readThrough.paths(table.name)
        let owners = (paths ?? []).filter { $0.keys == .caller }.map {
            "t.\(SQL.id($0.column))::text = ferry.current_user_id()::text"
        }
        let owned = owners.isEmpty ? "false" : "coalesce(" + owners.joined(separator: " OR ") + ", false)"
        let select = "SELECT t.id::text AS id, \(owned) AS owned FROM \(table.qualifiedName) t"
        guard paths != nil else { return PlannedStatement(select) }
        let parents = readThrough.withClause(for: [table.name], walks: false)
        return PlannedStatement(
            (parents.isEmpty ? "" : "WITH \(parents)\n") + select + " WHERE t.id IN (\(readThrough.readableIDs(table.name)))")
    }

    /// A stream's own check, with its guard read after the page
    /// (``ChangesPlan/streamGuard``), or beside an empty one
    /// (``ChangesPlan/guardedActivityStatement``), for ``StreamChecks`` to
    /// offer to other users' waiters. Two round trips when the activity check
    /// found something, as a poll's; the guard runs once either way.
    static func runStream(
        _ plan: ChangesPlan, guard guardStatement: PlannedStatement, caller: Caller, database: PostgresGateway,
        registry: WaiterRegistry
    ) throws -> SharedStreamPage {
        registry.checksRunning.add(1, ordering: .relaxed)
        defer { registry.checksRunning.subtract(1, ordering: .relaxed) }
        let look = try FeedProbe.stream(plan, guard: guardStatement).run(as: caller, on: database)
        let guardAnswer: StreamGuard
        var entries: [(xid: UInt64, json: Substring)]? = []
        if let result = look.pageResult {
            entries = SharedStreamPage.entries(of: look.page, xids: try ChangesPage.firstRow(result).string("xids"))
            guardAnswer = try StreamGuard(look.afterResults[0])
        } else {
            // The plain check's row would read as a guard that offers nobody: the probe's is the guarded one.
            guardAnswer = try StreamGuard(look.checkResult)
        }
        registry.checkCount.add(1, ordering: .relaxed)
        let (frontier, held) = look.held
        // Encoded here, once: the waiters that take the page as it is send these bytes (``EncodedPage``).
        return SharedStreamPage(
            since: plan.request.since.afterXID, page: look.page.encodedOnce(), frontier: frontier, held: held, entries: entries,
            guardAnswer: guardAnswer, leader: caller.trace?.userID, endedAt: .now)
    }
}
