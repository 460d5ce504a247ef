import FerryPostgres

/// The single SQL statement that reads one page of the feed, built from the
/// schema catalog and the access scopes; only the pipeline touches PostgreSQL.
///
/// Correctness rests on three facts (docs/changes-feed.md has the argument):
/// 1. The statement reads with one snapshot S, and serves only entries with
///    `xid < ferry.feed_frontier()` evaluated on S (the *frontier*: the oldest
///    xid running in S not known to belong to another database, else S's
///    xmax). Every transaction with an xid below it that could write this
///    database had ended before S was taken, so its writes are visible
///    in S if it committed, and absent for good if it rolled back.
/// 2. Every transaction that commits later has an xid at or above the
///    frontier (it was running when S was taken, or starts later and gets a
///    larger xid), so the set of entries below a frontier never grows.
///    A long transaction holds the frontier back; it never lets it pass.
/// 3. A later write restamps a row with the writer's xid, which is at or
///    above the frontier of every page served before that writer ended; so a
///    changed row is found after any existing cursor, in its latest state.
///
/// Hence every change committed before a response is either below that
/// response's frontier (served now or on the following pages) or above it
/// (served by a later poll). Pages follow `(xid, resource, id)` order; the
/// cursor is the last entry of a full page, else the frontier.
struct ChangesPlan {
    let request: ChangesRequest
    let catalog: SchemaCatalog
    let scopes: [AccessScope]
    /// The declarative rules' read paths (``ReadThrough``); without them each
    /// table's part walks every change since the cursor.
    let readThrough: ReadThrough
    /// Whether a table read through a parent the caller may mostly read
    /// walks instead (``ReadThrough/walkGate(_:)``).
    let walks: Walks
    /// A subscription's feed (``rooted(_:)``): its stream's root table and row
    /// id; nil for the default stream.
    let subscription: Subscribed?
    /// A subscription's page read as no user at all (``publicPrelude``), so
    /// that it is the same for every reader and a shared cache may keep it
    /// (ChangesPlan+PublicView.swift); false for every other page.
    var publicView = false

    struct Subscribed: Sendable, Equatable {
        let root: String
        let id: String
        /// Whether one reader's page may answer another's (``streamGuard``):
        /// the root's read paths are its owner column and its members, whose
        /// every change is a write of the root row or an access grant or
        /// revocation; a root read through a parent is not (a change of the
        /// parent leaves no trace the guard reads).
        var sharesAcrossUsers = false
    }

    /// How a table with a walk gate chooses between its paths and the walk.
    enum Walks: Sendable, Hashable {
        /// Always the paths (tests compare them with the walk).
        case never
        /// In each statement, from the caller's share of the parent.
        case decidedInStatement
        /// Beforehand (``WalkDecisions``): the parents whose tables walk.
        case through(Set<String>)
    }

    /// What one table's part of the feed does.
    enum Way: Equatable {
        case paths
        case walk
        /// The statement decides, by this one-row boolean expression.
        case gate(String)
    }

    init(
        request: ChangesRequest, catalog: SchemaCatalog, scopes: [AccessScope], readPaths: [ReadPath] = [],
        walks: Walks = .decidedInStatement
    ) {
        self.init(
            request: request, catalog: catalog, scopes: scopes,
            readThrough: ReadThrough(catalog: catalog, readPaths: readPaths), walks: walks)
    }

    /// With the schema load's ``ReadThrough`` (``AccessScopeCache``), built once.
    init(
        request: ChangesRequest, catalog: SchemaCatalog, scopes: [AccessScope], readThrough: ReadThrough,
        walks: Walks = .decidedInStatement, subscription: Subscribed? = nil
    ) {
        self.request = request
        self.catalog = catalog
        self.scopes = scopes
        self.readThrough = readThrough
        self.walks = walks
        self.subscription = subscription
    }

    /// The same plan with its walks decided beforehand.
    func walking(through parents: Set<String>) -> ChangesPlan {
        guard subscription == nil else { return self }
        return ChangesPlan(request: request, catalog: catalog, scopes: scopes, readThrough: readThrough, walks: .through(parents))
    }

    /// The same plan for another request (an event stream's next part).
    func serving(_ request: ChangesRequest) -> ChangesPlan {
        var plan = ChangesPlan(
            request: request, catalog: catalog, scopes: scopes, readThrough: readThrough, walks: walks,
            subscription: subscription)
        plan.publicView = publicView
        return plan
    }

    /// The plan of a subscription to `stream` at row `id` (core 0025): the
    /// request narrowed to the stream's tables, each read through its paths
    /// from the root row (``ReadThrough/rooted(at:)``), never walked; nil when
    /// the stream's root has no read paths.
    func rooted(_ stream: SyncStream, id: String) -> ChangesPlan? {
        rooted(stream, id: id, through: readThrough.rooted(at: stream.scope))
    }

    /// ``rooted(_:id:)`` with the stream's read from its root worked out
    /// already (``AccessScopeCache/rooted(at:for:generation:schema:database:)``).
    func rooted(_ stream: SyncStream, id: String, through root: (readThrough: ReadThrough, tables: [String])?) -> ChangesPlan? {
        guard let (rooted, tables) = root else { return nil }
        let ownPaths = readThrough.paths(stream.scope) ?? []
        let shares = ownPaths.allSatisfy { if case .readable = $0.keys { false } else { true } }
        return ChangesPlan(
            request: request.following(tables), catalog: catalog, scopes: scopes, readThrough: rooted, walks: .never,
            subscription: Subscribed(root: stream.scope, id: id, sharesAcrossUsers: shares))
    }

    /// What runs before the plan's statements in the caller's transaction: a
    /// subscription turns public reads on (a stream serves the public rows the
    /// device asked for) and names its row (`ferry.stream_key`, a bound
    /// value the paths read). Nothing for the default stream, which never
    /// reads a public row the caller could not read anyway.
    var prelude: [PlannedStatement] {
        guard let subscription else { return [] }
        if publicView { return publicPrelude }
        var binds = SQLBinds()
        let key = binds.bind(.text(subscription.id))
        return [binds.statement("SELECT " + TransactionSetting.publicReads.set("'on'") + ", " + TransactionSetting.streamKey.set("\(key)"))]
    }

    /// Runs `statement` after the prelude as the caller; its result.
    func run(_ statement: PlannedStatement, as caller: Caller, on database: PostgresGateway) throws -> PostgresResult {
        let results = try database.asCaller(caller, prelude + [statement])
        return results[results.count - 1]
    }

    /// How `table`'s part reads, when it has paths.
    func way(_ table: String) -> Way {
        let parents = readThrough.gateParents(table)
        guard !parents.isEmpty else { return .paths }
        switch walks {
        case .never: return .paths
        case .decidedInStatement: return readThrough.walkGate(table).map(Way.gate) ?? .paths
        case .through(let walking): return walking.isDisjoint(with: parents) ? .paths : .walk
        }
    }

    /// The resources whose paths a statement reads (those not walked).
    func readThroughResources(_ names: [String]) -> [String] {
        names.filter { readThrough.paths($0) != nil && way($0) != .walk }
    }

    /// The statement. Parameters: the cursor (``ChangeCursor/bind(into:)``),
    /// then the page size + 1 (one more tells whether there is more).
    var statement: PlannedStatement { statement(withXIDs: false) }

    /// The parameters every statement of the plan starts with: the cursor's.
    func cursorBinds() -> (binds: SQLBinds, cursor: BoundCursor) {
        var binds = SQLBinds()
        let cursor = request.since.bind(into: &binds)
        return (binds, cursor)
    }

    /// ``statement``, with `withXIDs` one more column: the page's entries'
    /// xids in order (`{x1,x2,...}`), so that another cursor's page can be cut
    /// from it (``SharedStreamPage``).
    func statement(withXIDs: Bool) -> PlannedStatement { statement(withXIDs: withXIDs, window: nil) }

    /// ``statement``, with `window` the window read's columns beside it
    /// (``windowColumns(_:xid8:limit:)``), in its snapshot.
    func statement(withXIDs: Bool, window: [WindowTable]?) -> PlannedStatement {
        var (binds, cursor) = cursorBinds()
        let limit = binds.bind(.int(Int64(request.limit + 1)))
        let windowSQL = window.map { tables in
            self.windowColumns(tables, xid8: cursor.xid8, limit: binds.bind(.int(Int64(Self.windowRowLimit))))
        }
        let blocks = request.resources.enumerated().compactMap { index, name in
            catalog[name].map { stream($0, index: index, cursor: cursor, limit: limit) }
        }
        let readable =
            ((pagesThroughPaths ? [readThrough.withClause(for: readThroughResources(request.resources), walks: walks == .decidedInStatement)] : [])
            + boundDefinitions(limit: limit, cursor: cursor))
            .filter { !$0.isEmpty }.joined(separator: ",\n")
        let next = ChangeCursor.entryColumns
        let sql = """
            WITH f AS MATERIALIZED (
              SELECT s.frontier, e.expired, e.ahead, \(cursor.id)::text AS cursor_id,
                     CASE WHEN e.expired OR e.ahead THEN '0'::xid8 ELSE s.frontier END AS upto
                FROM (SELECT ferry.feed_frontier() AS frontier OFFSET 0) s
               CROSS JOIN ferry.purge_horizon h
               CROSS JOIN LATERAL (SELECT \(cursor.expired(horizon: "h.horizon_xid")) AS expired, \(cursor.ahead) AS ahead) e
            ),\(readable.isEmpty ? "" : " \(readable),") c AS (
            \(blocks.joined(separator: "\nUNION ALL\n"))
            ), p AS (
              SELECT c.*, row_number() OVER (ORDER BY c.x, c.ri, c.ord) AS k
                FROM (SELECT * FROM c ORDER BY x, ri, ord LIMIT \(limit)) c
            )
            SELECT f.frontier::text AS frontier, f.expired AS expired, f.ahead AS ahead,
                   (SELECT count(*) FROM p) AS count,
                   (SELECT json_agg(json_build_object('resource', p.r, 'data', p.data) ORDER BY p.k)
                      FROM p WHERE p.k < \(limit)) AS changes,
                   (SELECT p.x::text FROM p WHERE p.k = \(limit) - 1) AS \(next.xid),
                   (SELECT p.r FROM p WHERE p.k = \(limit) - 1) AS \(next.resource),
                   (SELECT p.id FROM p WHERE p.k = \(limit) - 1) AS \(next.id)\(withXIDs ? ",\n       (SELECT array_agg(p.x ORDER BY p.k) FROM p WHERE p.k < \(limit))::text AS xids" : "")\(windowSQL.map { ",\n       " + $0.joined(separator: ",\n       ") } ?? "")
              FROM f
            """
        return binds.statement(sql)
    }
}
