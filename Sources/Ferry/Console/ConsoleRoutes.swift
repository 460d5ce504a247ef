import FerryHTTP
import Foundation
import FerryMemcached
import FerryPostgres
import Logging

/// The operator's console: its pages at `/console/` and its API under
/// `/console/api/` (docs/CONSOLE.md; the routes are in docs/API.md,
/// "Console").
///
/// Every API route takes a console token (``OperatorSession``), never an app
/// user's, and every route that shows user data or writes first appends an
/// entry to the audit log in the same round trip as its first read, so
/// nothing is shown or changed unrecorded. Reads past Row Level Security go
/// through the `ferry.console_*` functions; what a user sees is read by
/// replaying the user's own request through the API's routes as that user
/// (``ConsoleDatabase/asUser(_:tokenHash:_:)``).
struct ConsoleRoutes: Sendable {
    static let prefix = "/console"
    static let api = "/console/api"

    let console: ConsoleDatabase
    let schema: SchemaCache
    let configuration: FerryConfiguration
    /// The API's routes, for "see as a user": the user's request is answered by them.
    let operations: Router
    /// Paging snapshots, shared with Index.
    let paging: IndexPaging
    let metrics: FerryMetrics
    let memcached: MemcachedClient
    /// The serve pool, for the purge (the same path as the server's periodic one).
    let pool: PostgresPool
    /// The live feed: what a user's devices wait on right now, here and on the other instances.
    let live: LiveFeed
    let logger: Logger
    let scopes = AccessScopeCache()
    /// Console sessions checked lately, for Health while PostgreSQL is down.
    let recentSessions = ConsoleRecentSessions()

    var database: PostgresGateway { console.database }
    var schemaName: String { configuration.database.schema }

    func register(on router: inout Router, handle: RouteHandling) {
        ConsoleAssets().register(on: &router)
        let routes = self
        let api = Self.api
        typealias Handler = @Sendable (ConsoleRoutes, HTTPRequest, RequestContext) throws -> HTTPResponse
        func get(_ path: String, _ handler: @escaping Handler) {
            router.get(api + path, handle { request, context in Self.secured(try routes.checked(request, context, handler)) })
        }
        func post(_ path: String, _ handler: @escaping Handler) {
            router.post(api + path, handle { request, context in Self.secured(try routes.checked(request, context, handler)) })
        }
        post("/session") { try $0.signIn($1, $2) }
        get("/session") { try $0.session($1, $2) }
        router.delete(
            api + "/session",
            handle { request, context in
                Self.secured(try routes.checked(request, context) { try $0.signOut($1, $2) })
            })
        get("/resources") { try $0.resources($1, $2) }
        get("/resources/:resource/rows") { try $0.rows($1, $2) }
        get("/resources/:resource/rows/:id") { try $0.row($1, $2) }
        get("/users") { try $0.users($1, $2) }
        get("/users/:user") { try $0.user($1, $2) }
        get("/users/:user/changes") { try $0.userChanges($1, $2) }
        get("/users/:user/rows/:resource") { try $0.userRows($1, $2) }
        post("/users/:user/tokens/:token/revoke") { try $0.revokeToken($1, $2) }
        post("/users/:user/tokens/revoke") { try $0.revokeAllTokens($1, $2) }
        post("/users/:user/disable") { try $0.disableUser($1, $2) }
        post("/users/:user/enable") { try $0.enableUser($1, $2) }
        get("/health") { try $0.health($1, $2) }
        post("/purge") { try $0.purge($1, $2) }
        post("/jwks/refetch") { try $0.refetchKeys($1, $2) }
        get("/audit") { try $0.audit($1, $2) }
    }

    /// `handler`'s answer; a refusal it found before the console token was
    /// checked (a malformed query, an unknown user id) goes out only once the
    /// token is, so a caller without a live console token learns nothing but 401.
    func checked(
        _ request: HTTPRequest, _ context: RequestContext,
        _ handler: (ConsoleRoutes, HTTPRequest, RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        do {
            return try handler(self, request, context)
        } catch let problem as Problem where problem.status != 401 && problem.status < 500 && request.path != Self.api + "/session" {
            _ = try console.run(try Self.tokenHash(request), [])
            throw problem
        }
    }

    /// Every API answer: never cached (it is an operator's view of live data),
    /// and under the same strict policy as the pages. ``ConsoleHeadersResponder``
    /// does the same for every answer under `/console`, thrown problems and the
    /// router's refusals included; this covers a handler's answer where the
    /// routes are mounted without the middleware (the route tests' router).
    static func secured(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.replace("Cache-Control", "no-store")
        for (name, value) in ConsoleSecurityHeaders.all { response.headers.replace(name, value) }
        return response
    }

    /// The console token's hash; 401 without one. The request log line names the operator.
    static func tokenHash(_ request: HTTPRequest) throws -> String {
        try OperatorSession.tokenHash(request)
    }

    /// Notes the operator for the request log line.
    static func trace(_ session: OperatorSession, _ context: RequestContext) {
        context.scope.trace?.userID = "operator:" + session.name
    }

    /// The served resource named by the route's `:resource`; 404 otherwise.
    func resource(_ context: RequestContext) throws -> Resource {
        guard let name = context.parameters["resource"], let resource = schema.catalog[name] else {
            throw Problem.notFound("no such resource")
        }
        return resource
    }

    /// The route's `:user`, which must be a UUID; 404 otherwise (no user has another id).
    static func userID(_ context: RequestContext) throws -> String {
        guard let id = context.parameters["user"], ValueKind.isUUID(id) else { throw Problem.notFound("no such user") }
        return id.lowercased()
    }

    /// A JSON answer from a value.
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        .json(value.bytes, status: status)
    }

    /// A write's body: it must say `{"confirm": true}` (the console asks before
    /// it sends, and a script must say so too), and may carry `retention_days`
    /// (the purge). Any other member, or a value of another type, is 400.
    struct WriteBody: Decodable {
        let confirm: Bool?
        let retentionDays: Int?

        enum CodingKeys: String, CodingKey {
            case confirm
            case retentionDays = "retention_days"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            confirm = try container.decodeIfPresent(Bool.self, forKey: .confirm)
            retentionDays = try container.decodeIfPresent(Int.self, forKey: .retentionDays)
        }
    }

    /// The checked body of a write (see ``WriteBody``); `allowed` are the members it may carry besides `confirm`.
    static func confirmed(_ request: HTTPRequest, allowed: Set<String> = []) throws -> WriteBody {
        let members = try RequestBody.smallObject(request)
        if let null = members.first(where: { $0.value is NSNull && $0.key != "confirm" })?.key {
            throw Problem(400, .badRequest, "\(null.prefix(64)) may not be null")
        }
        if let unknown = members.keys.first(where: { $0 != "confirm" && !allowed.contains($0) }) {
            throw Problem(
                400, .badRequest, "unknown member \(unknown.prefix(64)); a write takes confirm\(allowed.sorted().map { " and " + $0 }.joined())")
        }
        let body: WriteBody
        do {
            body = try JSONDecoder().decode(WriteBody.self, from: Data(request.body))
        } catch {
            throw Problem(400, .badRequest, "confirm must be true or false, retention_days a whole number")
        }
        guard body.confirm == true else {
            throw Problem(422, .confirmationRequired, "a write needs {\"confirm\": true} in its body")
        }
        return body
    }
}
