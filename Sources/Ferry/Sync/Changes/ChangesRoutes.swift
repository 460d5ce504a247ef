import FerryHTTP
import FerryPostgres

/// `GET /v1/changes`: delta sync (API.md, "Delta sync"), answered at once (a
/// poll), when there is something to answer (a long poll, `wait=`,
/// ChangesRoutes+LongPoll.swift), or as a stream of pages (server-sent events,
/// `Accept: text/event-stream`, ChangesRoutes+EventStream.swift).
struct ChangesRoutes: Sendable {
    let database: PostgresGateway
    let schema: SchemaCache
    let schemaName: String
    let live: LiveFeed
    let scopes = AccessScopeCache()
    private let walkDecisions = WalkDecisions()

    init(database: PostgresGateway, schema: SchemaCache, schemaName: String, live: LiveFeed) {
        self.database = database
        self.schema = schema
        self.schemaName = schemaName
        self.live = live
    }

    func register(on router: inout Router, handle: RouteHandling) {
        router.get("/v1/changes", handle { request, context in try changes(request, context) })
        router.post("/v1/changes/wait", handle { request, context in try waitForChanges(request, context) })
    }

    func changes(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        // A trace of its own when the chain gave none: a waiter learns its caller from it.
        let caller = Caller(
            credential: try Caller.credential(request), trace: context.scope.trace ?? RequestTrace(),
            transaction: context.scope.transaction)
        let catalog = schema.catalog
        var parsed = try ChangesRequest(request, catalog: catalog)
        let generation = schema.generation
        if parsed.stream, parsed.startsNow, context.resumption == nil {
            // An event stream from now goes on from this moment's cursor: its first event is
            // empty and carries it. (Its later parts go on from the last event's cursor.)
            parsed = parsed.continuing(after: try FeedProbe.frontierCursor(parsed, as: caller, on: database))
        }
        let undecided = ChangesPlan(
            request: parsed, catalog: catalog,
            scopes: try scopes.scopes(for: catalog, generation: generation, schema: schemaName, database: database),
            readThrough: try scopes.readThrough(for: catalog, generation: generation, schema: schemaName, database: database))
        let plan: ChangesPlan
        if let subscription = parsed.subscription {
            plan = try subscribed(undecided, to: subscription, generation: generation)
        } else {
            plan = parsed.startsNow && !parsed.stream ? undecided : try decided(undecided, caller: caller, generation: generation)
        }
        // Only a GET the server can park waits: not a HEAD, nor one a batch replays in its transaction.
        let ticket = caller.transaction == nil && request.method == "GET" ? context.parkingTicket() : nil
        if let ticket, parsed.stream {
            return try eventStream(context, parsed, plan: plan, caller: caller, generation: generation, ticket: ticket)
        }
        if let ticket, let wait = parsed.wait, wait > 0, !parsed.startsNow {
            return try longPoll(request, context, parsed, plan: plan, caller: caller, generation: generation, ticket: ticket, wait: wait)
        }
        if Self.mayShare(request, parsed, caller: caller), let shared = try sharedAnswer(request, parsed, plan: plan, caller: caller) {
            return shared
        }
        return Self.answer(try poll(plan: plan, caller: caller), request: request, parsed: parsed)
    }

    /// The plan of a subscription (`stream=<name>:<id>`): 400 for a stream
    /// name the app did not declare or an id that cannot be its scope's (both
    /// public facts); an id the caller may not read, or that no row has, is
    /// a stream with nothing in it.
    func subscribed(_ plan: ChangesPlan, to subscription: StreamSubscription, generation: Int) throws -> ChangesPlan {
        let streams = try scopes.streams(for: plan.catalog, generation: generation, schema: schemaName, database: database)
        let stream = try SyncStream.named(subscription, among: streams, catalog: plan.catalog)
        let root = try scopes.rooted(at: stream.scope, for: plan.catalog, generation: generation, schema: schemaName, database: database)
        guard let rooted = plan.rooted(stream, id: subscription.id, through: root) else {
            throw Problem(500, .internalError, "stream \(stream.name) has no read paths from \(stream.scope)")
        }
        return rooted
    }

    /// `plan` with the caller's walk decisions (``WalkDecisions``): remembered,
    /// or decided now by one statement as the caller.
    func decided(_ plan: ChangesPlan, caller: Caller, generation: Int) throws -> ChangesPlan {
        guard !plan.readThrough.decisionParents(for: plan.request.resources).isEmpty else { return plan }
        let key = WalkDecisions.Key(bearer: caller.credential.hash, generation: generation)
        if let walking = walkDecisions.walking(key) { return plan.walking(through: walking) }
        // For every table, not only this request's: the decision is remembered for the caller's later requests.
        guard let decision = plan.readThrough.decision else { return plan }
        let row = try ChangesPage.firstRow(database.asCaller(caller, [decision.statement])[0])
        var walking = Set<String>()
        for (column, parent) in decision.parents.enumerated() where try row.bool(column) == true { walking.insert(parent) }
        walkDecisions.remember(walking, for: key)
        return plan.walking(through: walking)
    }

    /// The page a poll answers now (``FeedProbe/poll(_:)``): the frontier for
    /// `since=now`, else the activity check, and the page statement when it found something.
    func poll(plan: ChangesPlan, caller: Caller) throws -> ChangesPage {
        try FeedProbe.poll(plan).run(as: caller, on: database).page
    }

    /// A page that is the caller's own: `private, no-store`, so that no
    /// shared cache keeps it (pages for everyone: ChangesRoutes+SharedCache.swift).
    static func answer(_ page: ChangesPage, request: HTTPRequest, parsed: ChangesRequest) -> HTTPResponse {
        let headers = HTTPHeaders([
            ("ETag", "\"\(page.cursor.token)\""), ("Cache-Control", "private, no-store"), ("Vary", "Authorization"),
        ])
        // The cheap "any activity since?" check: 304 carries the cursor the
        // 200 would have had, so the client may move on to it.
        let conditions = ReadConditions(request)
        let current = parsed.hasSince ? conditions.notModified(etag: "\"\(parsed.since.token)\"", lastModifiedMs: nil) : conditions.noneMatch == .any
        if page.isEmpty, current {
            return HTTPResponse(status: 304, headers: headers)
        }
        return .json(page.answerBody, headers: headers)
    }
}
