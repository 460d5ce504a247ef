import FerryHTTP
import FerryPostgres

/// `GET /console/api/resources`: every resource as the catalog has it (the
/// columns, references, rank and unique keys of `GET /v1`), with its sync
/// rules (whether Row Level Security is on and forced, its policies, the
/// access scopes it belongs to), its row and tombstone counts, and the
/// feed's retention: the purge horizon and when cursors expire.
extension ConsoleRoutes {
    func resources(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, [])
        let hash = try Self.tokenHash(request)
        let catalog = schema.catalog
        let (session, results) = try console.run(
            hash,
            [
                PlannedStatement(
                    """
                    SELECT coalesce(json_object_agg(s.table_name, json_build_object('rows', s.row_count, 'estimated', s.estimated,
                           'tombstones', s.tombstones, 'oldest_tombstone', s.oldest_tombstone)), '{}') AS counts
                      FROM ferry.console_table_stats(\(bind: hash)::bytea) s WHERE s.schema_name = \(bind: schemaName)
                    """ as SQLQuery),
                PlannedStatement(
                    """
                    SELECT coalesce(json_object_agg(c.relname, json_build_object(
                             'row_level_security', c.relrowsecurity, 'forced', c.relforcerowsecurity,
                             'policies', (SELECT coalesce(json_agg(json_build_object('name', p.policyname, 'command', p.cmd,
                                                 'permissive', p.permissive = 'PERMISSIVE', 'roles', p.roles,
                                                 'using', p.qual, 'with_check', p.with_check) ORDER BY p.policyname), '[]')
                                            FROM pg_policies p WHERE p.schemaname = n.nspname AND p.tablename = c.relname))), '{}') AS rules
                      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE n.nspname = \(bind: schemaName) AND c.relkind IN ('r', 'p')
                    """ as SQLQuery),
                Self.feedPosition,
            ])
        Self.trace(session, context)
        let scopes = try self.scopes.scopes(for: catalog, generation: schema.generation, schema: schemaName, database: database)
        let counts = try results[0].first?.string("counts") ?? "{}"
        let rules = try results[1].first?.string("rules") ?? "{}"
        let scopeList = JSONValue.array(
            scopes.map { scope in
                .object([
                    ("scope", .string(scope.scope)), ("member", .string(scope.member)), ("column", .string(scope.column)),
                    ("read_through_scope", .bool(scope.readThroughScope)),
                ])
            })
        let tombstones = configuration.tombstones
        return Self.json(
            .object([
                ("schema", .string(schemaName)),
                ("resources", CatalogRoutes.listing(catalog).member("resources") ?? .array([])),
                ("counts", .raw(Array(counts.utf8))),
                ("rules", .raw(Array(rules.utf8))),
                ("access_scopes", scopeList),
                (
                    "retention",
                    .object([
                        ("tombstone_retention_days", .int(tombstones.retentionDays)),
                        ("purge_interval_seconds", .int(tombstones.purgeIntervalSeconds)),
                        ("feed", try Self.feedJSON(results[2])),
                    ])
                ),
            ]))
    }

    /// The feed's position now: its frontier (below it every transaction has
    /// ended), the next transaction id, the purge horizon (a cursor at or below
    /// it gets 410 `cursor_expired`) and when the last purge ran.
    static let feedPosition = PlannedStatement(
        """
        SELECT f.frontier::text AS frontier, pg_snapshot_xmax(s)::text AS next_xid, h.horizon_xid::text AS purge_horizon,
               floor(extract(epoch FROM h.purged_at) * 1000)::bigint AS purged_at
          FROM pg_current_snapshot() s CROSS JOIN (SELECT ferry.feed_frontier() AS frontier OFFSET 0) f
         CROSS JOIN ferry.purge_horizon h
        """)

    static func feedJSON(_ result: PostgresResult) throws -> JSONValue {
        guard let row = result.first, let frontier = try row.uint64("frontier"), let next = try row.uint64("next_xid") else { return .null }
        return .object([
            ("frontier", .string(String(frontier))), ("next_xid", .string(String(next))),
            ("lag_xids", .int(Int(next &- frontier))),
            ("purge_horizon", .string(try row.string("purge_horizon") ?? "0")),
            ("purged_at", try row.int64("purged_at").map { .int(Int($0)) } ?? .null),
        ])
    }

    /// 400 `invalid_query` for a parameter not in `allowed`, or one given twice.
    static func onlyQuery(_ request: HTTPRequest, _ allowed: Set<String>) throws {
        var seen: Set<String> = []
        for (name, _) in request.query {
            guard allowed.contains(name) else {
                throw Problem(
                    400, .invalidQuery,
                    "unknown query parameter \(name.prefix(64))"
                        + (allowed.isEmpty ? "; this takes none" : "; this takes \(allowed.sorted().joined(separator: ", "))"))
            }
            guard seen.insert(name).inserted else { throw Problem(400, .invalidQuery, "\(name.prefix(64)) is given more than once") }
        }
    }
}

extension JSONValue {
    /// The value of an object's member `name`.
    func member(_ name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == name }?.1
    }
}
