import FerryHTTP
import FerryPostgres
import Synchronization

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
        router.get("/v1/changes", handle { request, _ in try changes(request) })
    }

    func changes(_ request: HTTPRequest) throws -> HTTPResponse {
        let hash = try Caller.tokenHash(request)
        let catalog = schema.catalog
        let parsed = try ChangesRequest(request, catalog: catalog)
        let plan = ChangesPlan(request: parsed, catalog: catalog,
                               scopes: try scopes.scopes(for: catalog, schema: schemaName, database: database))
        let page: ChangesPage
        do {
            let activity = try ChangesPage.firstRow(database.asCaller(tokenHash: hash, [plan.activityStatement])[0])
            if activity[2] == "t" { throw ChangesPage.expired }
            guard let frontier = activity[0].flatMap(UInt64.init) else { throw ChangesPage.malformed }
            if activity[3] == "t" {
                page = try ChangesPage(database.asCaller(tokenHash: hash, [plan.statement])[0], request: parsed)
            } else {
                page = ChangesPage(emptyBelow: frontier, request: parsed)
            }
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            // The cursor's id does not fit the resource's id type.
            throw ChangesRequest.invalid("since is not a cursor this server gave out; start over without since")
        }
        var headers = HTTPHeaders([("ETag", "\"\(page.cursor.token)\""), ("Cache-Control", "private, no-cache")])
        if page.isEmpty, IfNoneMatch.matches(request.headers["If-None-Match"], token: parsed.hasSince ? parsed.since.token : nil) {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.add("Vary", "Authorization")
        return .json(page.body, headers: headers)
    }
}

/// `If-None-Match` against the `since` cursor, by weak comparison (RFC 9110 §13.1.2).
enum IfNoneMatch {
    static func matches(_ header: String?, token: String?) -> Bool {
        guard let header else { return false }
        for item in header.split(separator: ",") {
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if let token, tag == "\"\(token)\"" { return true }
        }
        return false
    }
}

/// The access scopes, read once per catalog version (they change only with
/// migrations, which also change or reload the catalog).
final class AccessScopeCache: Sendable {
    private let cached = Mutex<(catalog: SchemaCatalog, scopes: [AccessScope])?>(nil)

    func scopes(for catalog: SchemaCatalog, schema: String, database: Database) throws -> [AccessScope] {
        if let hit = cached.withLock({ $0?.catalog == catalog ? $0?.scopes : nil }) { return hit }
        let loaded: [AccessScope]
        do {
            loaded = try database.pool.withConnection {
                try AccessScope.load(schema: schema, catalog: catalog, connection: $0)
            }
        } catch let error as PostgresError {
            throw DatabaseFailure.map(error, statementOffset: 0)
        }
        cached.withLock { $0 = (catalog, loaded) }
        return loaded
    }
}
