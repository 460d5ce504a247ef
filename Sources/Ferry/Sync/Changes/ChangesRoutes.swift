import FerryHTTP
import FerryPostgres

/// `GET /v1/changes`: delta sync (API.md, "Delta sync").
struct ChangesRoutes: Sendable {
    let database: Database
    let schema: SchemaCache
    let schemaName: String
    private let scopes = AccessScopeCache()

    init(database: Database, schema: SchemaCache, schemaName: String) {
        self.database = database
        self.schema = schema
        self.schemaName = schemaName
    }

    func register(on router: inout Router, handle: RouteHandling) {
        router.get("/v1/changes", handle { request, context in try changes(request, context) })
    }

    func changes(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let caller = context.caller(try Caller.credential(request))
        let catalog = schema.catalog
        let parsed = try ChangesRequest(request, catalog: catalog)
        let plan = ChangesPlan(request: parsed, catalog: catalog,
                               scopes: try scopes.scopes(for: catalog, schema: schemaName, database: database))
        let page: ChangesPage
        do {
            if parsed.startsNow {
                let row = try ChangesPage.firstRow(database.asCaller(caller, [Self.frontier])[0])
                guard let frontier = try row.uint64(0) else { throw ChangesPage.malformed }
                return Self.answer(ChangesPage(emptyBelow: frontier, request: parsed), request: request, parsed: parsed)
            }
            let activity = try ChangesPage.firstRow(database.asCaller(caller, [plan.activityStatement])[0])
            if try activity.bool(2) == true { throw ChangesPage.expired }
            guard let frontier = try activity.uint64(0) else { throw ChangesPage.malformed }
            if try activity.bool(3) == true {
                page = try ChangesPage(database.asCaller(caller, [plan.statement])[0], request: parsed)
            } else {
                page = ChangesPage(emptyBelow: frontier, request: parsed)
            }
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            // The cursor's id does not fit the resource's id type.
            throw ChangesRequest.invalid("since is not a cursor this server gave out; start over without since")
        }
        return Self.answer(page, request: request, parsed: parsed)
    }

    /// The frontier alone, for `since=now`: every transaction below it has ended,
    /// so whatever an Index read shows afterwards includes their writes, and every
    /// later change is at or above it.
    static let frontier = PlannedStatement("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")

    static func answer(_ page: ChangesPage, request: HTTPRequest, parsed: ChangesRequest) -> HTTPResponse {
        let headers = HTTPHeaders([
            ("ETag", "\"\(page.cursor.token)\""), ("Cache-Control", "private, no-cache"), ("Vary", "Authorization"),
        ])
        // The cheap "any activity since?" check: 304 carries the cursor the
        // 200 would have had, so the client may move on to it.
        let conditions = ReadConditions(request)
        let current = parsed.hasSince ? conditions.notModified(etag: "\"\(parsed.since.token)\"", lastModifiedMs: nil) : conditions.noneMatch == .any
        if page.isEmpty, current {
            return HTTPResponse(status: 304, headers: headers)
        }
        return .json(page.body, headers: headers)
    }
}
