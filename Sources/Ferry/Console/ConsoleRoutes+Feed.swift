import FerryHTTP
import FerryPostgres
import Foundation

/// `GET /console/api/users/<id>/changes?since=&limit=&resources=&stream=`:
/// what `GET /v1/changes` answers one of the user's devices from its cursor
/// (pasted from the device, or none for a full sync), on the default stream
/// or on the subscription `stream=<name>:<id>`, replayed as the user, and why
/// (``ConsoleFeedExplanation``): the cursor decoded, the feed's frontier and
/// purge horizon, the user's access grants and revocations after the cursor,
/// the transaction holding the frontier back, the user's live tokens and
/// latest refusal; for a subscription, whether the user reads its root row
/// (their own `GET /v1/<root>/<id>`, replayed too) and whether it is public.
///
/// The server keeps no record of a device's subscriptions (a device names
/// each on its requests, docs/API.md "Subscriptions"), so the operator names
/// the one to look at; `GET /console/api/users/<id>` lists the app's streams.
extension ConsoleRoutes {
    func userChanges(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, ["since", "limit", "resources", "stream"])
        // A limit or resources the feed would refuse is the operator's mistake: 400 here, as the
        // feed's own. A cursor is the device's: one that is no cursor at all (not even its
        // characters) is refused here too; one that only the feed can tell is not its own is
        // what the device would be told, and is explained.
        var rest = request
        rest.query = request.query.filter { $0.name != "since" }
        let parsed = try ChangesRequest(rest, catalog: schema.catalog)
        // A stream the app did not declare, or an id not of its root's type: refused as the feed does.
        let stream = try parsed.subscription.map { subscription -> (StreamListing, String) in
            let named = try SyncStream.named(
                subscription, among: try scopes.streams(for: schema.catalog, generation: schema.generation, schema: schemaName, database: database),
                catalog: schema.catalog)
            let listing = try scopes.listing(for: schema.catalog, generation: schema.generation, schema: schemaName, database: database)
            return (
                listing.first { $0.name == named.name } ?? StreamListing(name: named.name, root: named.scope, resources: [named.scope]),
                subscription.id
            )
        }
        if let since = request.queryValue("since"), !Self.looksLikeACursor(since) {
            throw Problem(400, .invalidQuery, "since is a cursor from the feed (1 and base64url), now, or nothing")
        }
        let userID = try Self.userID(context)
        let hash = try Self.tokenHash(request)
        let since = request.queryValue("since").flatMap { $0.isEmpty ? nil : $0 }
        let (session, results) = try console.run(
            hash,
            [
                ConsoleDatabase.audit(
                    hash, action: "view_user_changes",
                    target: [
                        ("user_id", .string(userID)), ("query", .string(request.rawQuery ?? "")),
                    ], requestID: context.requestID),
                Self.tokensStatement(hash, userID: userID),
                PlannedStatement(
                    "SELECT r.at, r.method, r.path, r.status, r.code FROM ferry.console_refusals(\(bind: hash)::bytea, \(bind: userID)::uuid, 1) r"
                        as SQLQuery),
                Self.oldestTransactions(hash),
            ])
        Self.trace(session, context)
        let cursor = since.flatMap { $0 == "now" ? nil : ChangeCursor(token: $0) }
        let seen = try console.asUser(userID, tokenHash: hash) { transaction, name in
            // The stream's root row as the user reads it, before the feed's page (whose stream
            // settings stay on for the rest of the transaction).
            let root = stream.map { stream, id in
                replay("/v1/\(stream.root)/\(id)", query: [], request: request, context: context, transaction: transaction)
            }
            let response = replay("/v1/changes", query: request.query, request: request, context: context, transaction: transaction)
            let caller = Caller(credential: .token(hash: hash), trace: nil, transaction: transaction)
            let facts = try database.asCaller(caller, [Self.feedPosition, Self.accessEvents(after: cursor)])
            return (name, response, facts, root)
        }
        guard let (name, response, facts, root) = seen else { throw Problem.notFound("no such user") }
        var body: [String: Any] = [:]
        if case .bytes(let bytes) = response.body, !bytes.isEmpty {
            body = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
        }
        let position = facts[0].first
        let shownStream = stream.map { stream, id in
            Self.streamShown(stream, id: id, root: root, publicRows: schema.catalog[stream.root]?.publicRows)
        }
        let explanation = ConsoleFeedExplanation(
            since: since, status: response.status, body: body,
            frontier: (try position?.uint64("frontier")) ?? 0, nextXID: (try position?.uint64("next_xid")) ?? 0,
            horizon: (try position?.uint64("purge_horizon")) ?? 0, access: Self.accessEvents(facts[1]),
            oldest: Self.oldest(results[3], frontier: try position?.uint64("frontier")),
            liveTokens: Self.liveTokens(results[1]),
            scopeResources: Set(
                try scopes.scopes(for: schema.catalog, generation: schema.generation, schema: schemaName, database: database).map(\.scope)),
            latestRefusal: try results[2].first.map { row in
                (try row.int64("at") ?? 0, row["method"] ?? "", row["path"] ?? "", try row.int("status") ?? 0, row["code"])
            }, stream: shownStream)
        return Self.json(
            .object(
                [
                    ("user", .object([("id", .string(userID)), ("name", .string(name))])),
                    ("request", .string(Self.target("/v1/changes", request.query))),
                ] + Self.answer(response) + [
                    ("explanation", explanation.json), ("running_transactions", Self.transactionsJSON(results[3])),
                ]))
    }

    /// A subscription as the explanation tells it: the stream, and the user's
    /// own answer for its root row (whether public: the flag of the row, when
    /// the root's own flag makes it so).
    static func streamShown(
        _ stream: StreamListing, id: String, root: HTTPResponse?, publicRows: Resource.PublicRows?
    ) -> ConsoleFeedExplanation.StreamShown {
        var isPublic: Bool?
        if let root, root.status == 200, let publicRows, publicRows.resource == stream.root, case .bytes(let bytes) = root.body,
            let row = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
        {
            isPublic = row[publicRows.flag] as? Bool
        }
        return ConsoleFeedExplanation.StreamShown(
            name: stream.name, id: id, root: stream.root, resources: stream.resources, rootStatus: root?.status ?? 0, isPublic: isPublic)
    }

    /// Whether `text` is spelled as a cursor is (`now`, or `1` and base64url), empty included.
    static func looksLikeACursor(_ text: String) -> Bool {
        text.isEmpty || text == "now"
            || (text.utf8.first == UInt8(ascii: "1") && text.utf8.count <= 2_000
                && text.utf8.dropFirst().allSatisfy { Base64URL.isAlphabet($0) } && text.utf8.count > 1)
    }

    /// The user's own access grants and revocations after `cursor`, newest 50,
    /// read as the user (their Row Level Security shows them only their own):
    /// `kind, xid, resource, rows, ids, at`, oldest first.
    static func accessEvents(after cursor: ChangeCursor?) -> PlannedStatement {
        let after = cursor?.position == nil ? ">" : ">="
        var binds = SQLBinds()
        let xid = binds.bind(.text(String(cursor?.afterXID ?? 0)))
        // The revocations the feed reads from this cursor: none from the start, and none
        // below a download's base (docs/changes-feed.md). Such a revocation took nothing
        // away that the download holds, and the note would tell of revoked entries that
        // never come.
        let reads = cursor.map { !$0.isStart } ?? false
        let base = binds.bind(.text(String(cursor?.base ?? 0)))
        return binds.statement(
            """
            SELECT e.kind, e.xid::text AS xid, e.resource, e.rows, array_to_string(e.ids, ',') AS ids, e.at FROM (
              SELECT 'grant' AS kind, g.xid, c.relname::text AS resource, 1::bigint AS rows, ARRAY[g.scope_id] AS ids,
                     floor(extract(epoch FROM g.created_at) * 1000)::bigint AS at
                FROM ferry.access_grants g JOIN pg_class c ON c.oid = g.scope_table
               WHERE g.user_id = ferry.current_user_id() AND g.xid \(after) \(xid)::xid8
              UNION ALL
              SELECT 'revocation', v.xid, c.relname::text, count(*), (array_agg(v.row_id ORDER BY v.row_id))[1:3],
                     floor(extract(epoch FROM min(v.created_at)) * 1000)::bigint
                FROM ferry.access_revocations v JOIN pg_class c ON c.oid = v.table_oid
               WHERE \(reads ? "" : "false AND ")v.user_id = ferry.current_user_id() AND v.xid \(after) \(xid)::xid8
                 AND v.xid >= \(base)::xid8
               GROUP BY v.xid, c.relname
              ORDER BY 2 DESC, 1, 3 LIMIT 50) e
             ORDER BY e.xid, e.kind, e.resource
            """)
    }

    static func accessEvents(_ result: PostgresResult) -> [ConsoleFeedExplanation.AccessEvent] {
        result.rows.map { row in
            ConsoleFeedExplanation.AccessEvent(
                kind: row["kind"] ?? "", xid: row["xid"] ?? "", resource: row["resource"] ?? "", rows: (try? row.int("rows")) ?? 0,
                ids: (row["ids"] ?? "").split(separator: ",").map(String.init), at: (try? row.int64("at")) ?? 0)
        }
    }

    /// The oldest running transactions with an xid, the first holding the
    /// feed's frontier back (``ferry.console_oldest_transactions``).
    static func oldestTransactions(_ hash: String) -> PlannedStatement {
        PlannedStatement(
            """
            SELECT o.xid, o.pid, o.application_name, o.state, o.age_ms, o.backend_type, o.role_name, o.query, o.this_database
              FROM ferry.console_oldest_transactions(\(bind: hash)::bytea) o
            """ as SQLQuery)
    }

    /// The one holding the feed at `frontier`, if among them; else the oldest of
    /// them that could: transactions of other databases never do (core 0023); a
    /// prepared one (no session, so no database named) may; since core 0032 one
    /// of this database holds it only once it has stamped (its xid is then the
    /// frontier).
    static func oldest(_ result: PostgresResult, frontier: UInt64?) -> ConsoleFeedExplanation.OldestTransaction? {
        let holder = frontier.flatMap { frontier in result.rows.first { UInt64($0["xid"] ?? "") == frontier } }
        guard let row = holder ?? result.rows.first(where: { $0["this_database"] != "f" }), let xid = row["xid"] else { return nil }
        return ConsoleFeedExplanation.OldestTransaction(
            xid: xid, pid: try? row.int("pid"), application: row["application_name"], state: row["state"], ageMs: try? row.int64("age_ms"))
    }

    static func liveTokens(_ result: PostgresResult) -> Int {
        guard let text = result.first?["tokens"], let tokens = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        else { return 0 }
        return tokens.filter { $0["live"] as? Bool == true }.count
    }
}
