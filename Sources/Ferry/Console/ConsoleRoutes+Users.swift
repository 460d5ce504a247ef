import Foundation
import FerryHTTP
import FerryPostgres

/// "See as a user": who the users are, and for one of them what they may read
/// (per resource, with counts), their tokens and their latest refused
/// requests; what the feed would send one of their devices
/// (``ConsoleFeedExplanation``); and any resource through their eyes.
///
/// What the user may read is read by the user's own statements, in a
/// read-only transaction set up as the user (``ConsoleDatabase/asUser``):
/// the counts by Index's own plan (its access-scope drives included), the
/// feed and the rows by replaying `GET /v1/changes` and `GET /v1/<r>`
/// through the API's routes, so the answers are the ones the user's device
/// gets, byte for byte, under the same Row Level Security.
extension ConsoleRoutes {
    /// `GET /console/api/users?search=&limit=`: users whose name contains
    /// `search` (case-insensitive; those starting with it first), or whose id
    /// it is, by name; at most `limit` (default 50, up to 500).
    func users(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, ["search", "limit"])
        let limit = try Self.limit(request, default: 50, max: 500)
        let search = request.queryValue("search") ?? ""
        guard search.unicodeScalars.count <= 200 else { throw Problem(400, .invalidQuery, "search is at most 200 characters") }
        let hash = try Self.tokenHash(request)
        let (session, results) = try console.run(
            hash,
            [
                ConsoleDatabase.audit(hash, action: "search_users", target: [("search", .string(search))], requestID: context.requestID),
                Self.usersStatement(hash, search: search, limit: limit),
            ])
        Self.trace(session, context)
        return Self.json(.object([("users", .raw(Array((results[1].first?["users"] ?? "[]").utf8)))]))
    }

    static func usersStatement(_ hash: String, search: String, limit: Int) -> PlannedStatement {
        PlannedStatement(
            """
            SELECT coalesce(json_agg(json_build_object('id', u.id, 'name', u.name, 'created_at', u.created_at,
                   'live_tokens', u.live_tokens, 'disabled', u.disabled)), '[]') AS users
              FROM ferry.console_users(\(bind: hash)::bytea, \(bind: search), \(bind: limit)::int) u
            """ as SQLQuery)
    }

    /// `GET /console/api/users/<id>`: the user, what they may read per
    /// resource (`readable` rows and `tombstones`, counted as the user), the
    /// tokens they hold, their latest refused requests with the problem+json,
    /// the app's `streams` as `GET /v1` lists them, and `waiting`: the user's
    /// open long polls, event streams and waits on every instance that answers
    /// within 2 s (``WaitRoster``), with the streams each follows and the
    /// instance that holds it; `instances` says how many answered. The server keeps no other record of which streams
    /// a device subscribes to (a device names each on its requests): a device
    /// that waits shows them, and the operator picks one to replay
    /// (``userChanges``).
    func user(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, [])
        let userID = try Self.userID(context)
        let hash = try Self.tokenHash(request)
        let (session, results) = try console.run(
            hash,
            [
                ConsoleDatabase.audit(hash, action: "view_user", target: [("user_id", .string(userID))], requestID: context.requestID),
                Self.tokensStatement(hash, userID: userID),
                Self.refusalsStatement(hash, userID: userID),
                PlannedStatement(
                    "SELECT s.disabled_at, s.last_used_at, s.lookup_name FROM ferry.console_user_state(\(bind: hash)::bytea, \(bind: userID)::uuid) s"
                        as SQLQuery),
            ])
        Self.trace(session, context)
        let state = results[3].first
        let disabledAt = try state?.int64("disabled_at")
        // A JWT user's last request (core 0029), and the name others find them by.
        let lastUsedAt = try state?.int64("last_used_at")
        let lookupName = state?["lookup_name"]
        let catalog = schema.catalog
        let scopes = try self.scopes.scopes(for: catalog, generation: schema.generation, schema: schemaName, database: database)
        let seen = try console.asUser(userID, tokenHash: hash) { transaction, name -> (String, PostgresResult) in
            let caller = Caller(credential: .token(hash: hash), trace: nil, transaction: transaction)
            return (name, try database.asCaller(caller, [Self.readableCounts(catalog, scopes: scopes)])[0])
        }
        guard let (name, counts) = seen else { throw Problem.notFound("no such user") }
        // Asked once the user is known: an unknown id asks no instance.
        let census = try waitCensus(of: userID)
        let streams = try self.scopes.listing(for: catalog, generation: schema.generation, schema: schemaName, database: database)
        let resources = JSONValue.array(
            counts.rows.map { row in
                .object([
                    ("name", .string(row["resource"] ?? "")), ("readable", .int((try? row.int("readable")) ?? 0)),
                    ("tombstones", .int((try? row.int("tombstones")) ?? 0)),
                ])
            })
        return Self.json(
            .object([
                (
                    "user",
                    .object([
                        ("id", .string(userID)), ("name", .string(name)), ("disabled", .bool(disabledAt != nil)),
                        ("disabled_at", disabledAt.map { .int(Int($0)) } ?? .null),
                        ("last_used_at", lastUsedAt.map { .int(Int($0)) } ?? .null),
                        ("lookup_name", lookupName.map { .string($0) } ?? .null),
                    ])
                ),
                ("resources", resources),
                ("tokens", .raw(Array((results[1].first?["tokens"] ?? "[]").utf8))),
                ("refusals", .raw(Array((results[2].first?["refusals"] ?? "[]").utf8))),
                ("streams", .array(streams.map(\.json))),
                ("waiting", .array(census.answers.flatMap { Self.waitsJSON($0, this: live.roster.instance) })),
                ("instances", Self.instancesJSON(census)),
            ]))
    }

    /// The user's waits on every instance that answers in time (``WaitRoster``).
    func waitCensus(of userID: String) throws -> WaitRoster.Census {
        try live.roster.census(of: userID, local: live.registry.waits(of: userID), listening: live.isListening) { statement in
            try database.anonymous([statement])[0].first?.int("listening") ?? 0
        }
    }

    /// One instance's waits, each naming the instance (`host`, `pid`, `this_instance`).
    static func waitsJSON(_ answer: WaitRoster.Answer, this: String) -> [JSONValue] {
        answer.waits.map { wait in
            guard case .object(var members) = waitJSON(wait) else { return waitJSON(wait) }
            members.append(
                (
                    "instance",
                    .object([("host", .string(answer.host)), ("pid", .int(Int(answer.pid))), ("this_instance", .bool(answer.instance == this))])
                ))
            return .object(members)
        }
    }

    /// How many instances answered, how many were counted and did not answer
    /// in time, and how many waits were left out of an answer to fit its payload.
    static func instancesJSON(_ census: WaitRoster.Census) -> JSONValue {
        .object([
            ("answered", .int(census.answers.count)), ("unanswered", .int(census.unanswered)),
            ("waits_left_out", .int(census.answers.reduce(0) { $0 + $1.more })),
        ])
    }

    /// One open wait: `route` (`wait` for `POST /v1/changes/wait`, else
    /// `changes`: a long poll or event stream), whether it follows the default
    /// stream, its other streams as the device named them (`<name>:<id>`),
    /// the resources it follows (null: all), and since when (ms).
    static func waitJSON(_ wait: WaiterRegistry.Wait) -> JSONValue {
        .object([
            ("route", .string(wait.several ? "wait" : "changes")),
            ("default_stream", .bool(wait.followsDefault)),
            ("streams", .array(wait.streams.map { .string($0) })),
            ("resources", wait.resources.map { .array($0.sorted().map { .string($0) }) } ?? .null),
            ("since", .int(Int(wait.since.timeIntervalSince1970 * 1000))),
        ])
    }

    /// For every resource, how many live rows and tombstones the caller may
    /// read: Index's own condition with no filters and tombstones included
    /// (so its access-scope drives too), counted instead of listed.
    static func readableCounts(_ catalog: SchemaCatalog, scopes: [AccessScope]) -> PlannedStatement {
        let parts = catalog.names.compactMap { catalog[$0] }.compactMap { resource -> String? in
            guard let query = try? IndexQuery([("include_deleted", "true")], resource: resource, defaultLimit: 1, maxLimit: 1)
            else { return nil }
            let plan = IndexSQL(
                resource: resource, query: query,
                drives: IndexSQL.drives(resource, catalog: catalog, scopes: scopes, query: query))
            return """
                SELECT \(SQL.literal(resource.name))::text AS resource, count(*) FILTER (WHERE NOT t."is_deleted") AS readable,
                       count(*) FILTER (WHERE t."is_deleted") AS tombstones FROM \(resource.qualifiedName) t WHERE \(plan.condition.sql)
                """
        }
        return PlannedStatement(
            parts.isEmpty ? "SELECT NULL::text AS resource, 0 AS readable, 0 AS tombstones WHERE false" : parts.joined(separator: "\nUNION ALL\n"))
    }

    static func tokensStatement(_ hash: String, userID: String) -> PlannedStatement {
        PlannedStatement(
            """
            SELECT coalesce(json_agg(json_build_object('id', t.token_id, 'created_at', t.created_at,
                   'expires_at', t.expires_at, 'revoked', t.revoked,
                   'live', NOT t.revoked AND t.expires_at > floor(extract(epoch FROM now()) * 1000),
                   'last_used_at', t.last_used_at)), '[]') AS tokens
              FROM ferry.console_user_tokens(\(bind: hash)::bytea, \(bind: userID)::uuid) t
            """ as SQLQuery)
    }

    static func refusalsStatement(_ hash: String, userID: String) -> PlannedStatement {
        PlannedStatement(
            """
            SELECT coalesce(json_agg(json_build_object('id', r.id, 'at', r.at, 'method', r.method, 'path', r.path,
                   'status', r.status, 'code', r.code, 'problem', r.problem, 'request_id', r.request_id) ORDER BY r.id DESC), '[]') AS refusals
              FROM ferry.console_refusals(\(bind: hash)::bytea, \(bind: userID)::uuid, 50) r
            """ as SQLQuery)
    }

    /// `GET /console/api/users/<id>/rows/<r>?<Index's query>`: the user's own
    /// `GET /v1/<r>` (filters, order, limit, `include_deleted`, paging tokens),
    /// answered as the user: `{"user", "request", "status", "body"}`.
    func userRows(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let userID = try Self.userID(context)
        let resource = try resource(context)
        // A query Index would refuse is the operator's mistake: 400 here, as Index's own.
        _ = try PagingRequest(query: request.query)
        _ = try IndexQuery(
            request.query, resource: resource, defaultLimit: configuration.paging.defaultLimit,
            maxLimit: configuration.paging.maxLimit)
        let hash = try Self.tokenHash(request)
        let path = "/v1/" + resource.name
        let (session, _) = try console.run(
            hash,
            [
                ConsoleDatabase.audit(
                    hash, action: "view_user_rows",
                    target: [
                        ("user_id", .string(userID)), ("resource", .string(resource.name)), ("query", .string(request.rawQuery ?? "")),
                    ], requestID: context.requestID)
            ])
        Self.trace(session, context)
        let replayed = try console.asUser(userID, tokenHash: hash) { transaction, name in
            (name, replay(path, query: request.query, request: request, context: context, transaction: transaction))
        }
        guard let (name, response) = replayed else { throw Problem.notFound("no such user") }
        return Self.json(
            .object(
                [
                    ("user", .object([("id", .string(userID)), ("name", .string(name))])),
                    ("request", .string(Self.target(path, request.query))),
                ] + Self.answer(response)))
    }

    /// `request` (the operator's) replayed as `GET path?query` through the
    /// API's routes, inside `transaction` (the user's): the user's own answer.
    func replay(
        _ path: String, query: [(name: String, value: String)], request: HTTPRequest, context: RequestContext,
        transaction: CallerTransaction
    ) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let authorization = request.headers["Authorization"] { headers.add("Authorization", authorization) }
        let rawQuery = Self.rawQuery(query)
        let inner = HTTPRequest(
            method: "GET", target: Self.target(path, query), path: path,
            rawQuery: rawQuery.isEmpty ? nil : rawQuery, query: query, headers: headers)
        var innerContext = RequestContext(
            requestID: context.requestID + ".user", remoteAddress: context.remoteAddress,
            logger: context.logger)
        innerContext.scope = RequestScope(trace: nil, transaction: transaction)
        return operations.respond(to: inner, context: innerContext)
    }

    /// `status`, the validators, and the body (JSON as it is, else null).
    static func answer(_ response: HTTPResponse) -> [(String, JSONValue)] {
        var body = JSONValue.null
        if case .bytes(let bytes) = response.body, !bytes.isEmpty, response.headers["Content-Type"]?.contains("json") == true {
            body = .raw(bytes)
        }
        return [
            ("status", .int(response.status)), ("etag", response.headers["ETag"].map { .string($0) } ?? .null),
            ("body", body),
        ]
    }

    static func target(_ path: String, _ query: [(name: String, value: String)]) -> String {
        let raw = rawQuery(query)
        return raw.isEmpty ? path : path + "?" + raw
    }

    /// A decoded query written back, every byte but the unreserved ones percent-encoded.
    static func rawQuery(_ query: [(name: String, value: String)]) -> String {
        query.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }.joined(separator: "&")
    }

    /// A comma stays: it separates a filter's values.
    static func percentEncoded(_ text: String) -> String { PercentEncoding.encoded(text, keeping: [UInt8(ascii: ",")]) }
}
