import FerryPostgres

/// What `ferry.refresh_sync_rules()` is about to put back after an app file: a ruled
/// table the file left unlike its rule (Row Level Security off, a generated policy
/// dropped, a privilege beyond the rule's or one of the rule's revoked). The refresh repairs it silently, so the
/// developer would never learn that the file holds a mistake; `ferry migrate` reports
/// each one as a warning naming the file (issue 48).
///
/// Read in the file's transaction, between the file and the refresh, as the owner.
/// A column a file adds to a ruled table is granted by the refresh too, as designed:
/// that is not a repair, so only column privileges beyond the rule are listed.
public struct RuleRepair: Sendable, Equatable {
    /// The ruled table, as SQL writes it.
    public var table: String
    /// What was wrong, and put back.
    public var repair: String

    static func pending(on connection: PostgresConnection) throws(PostgresError) -> [RuleRepair] {
        let ready = try connection.query(
            "SELECT pg_catalog.to_regprocedure('ferry.rules_writable(regclass)') IS NOT NULL AS ready")
        guard try ready.first?.bool("ready") == true else { return [] }
        return try connection.query(query).rows.map { row in
            RuleRepair(table: row["table_name"] ?? "", repair: row["repair"] ?? "")
        }
    }

    static let query = """
        SELECT r.table_oid::text AS table_name, x.repair
          FROM ferry.sync_rules r
          JOIN pg_catalog.pg_class c ON c.oid = r.table_oid
          CROSS JOIN LATERAL (
            SELECT 1 AS n, 'Row Level Security was disabled (it is enabled again)' AS repair WHERE NOT c.relrowsecurity
            UNION ALL
            SELECT 2, format('the rule''s policy %I was dropped (it is created again)', k)
              FROM jsonb_object_keys(r.policies) k
             WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid AND p.polname = k)
            UNION ALL
            SELECT 3, 'DELETE was granted to ferry_app (it is revoked: Ferry deletes by UPDATE … SET is_deleted, '
                      || 'and a purging session''s DELETE leaves devices no tombstone)'
             WHERE pg_catalog.has_table_privilege('ferry_app', c.oid, 'DELETE')
            UNION ALL
            SELECT 4, 'SELECT was revoked from ferry_app (it is granted again)'
             WHERE NOT pg_catalog.has_table_privilege('ferry_app', c.oid, 'SELECT')
            UNION ALL
            SELECT 5, format('%s (%s) was granted to ferry_app beyond the rule (it is revoked)', upper(k.kind),
                             string_agg(quote_ident(g.col), ', '))
              FROM (VALUES ('insert'), ('update')) k(kind)
              CROSS JOIN LATERAL jsonb_array_elements_text(ferry.rules_granted(c.oid) -> k.kind) g(col)
             WHERE NOT (ferry.rules_writable(c.oid) -> k.kind) ? g.col
             GROUP BY k.kind
            UNION ALL
            -- A privilege the rule grants, revoked by the file: the refresh grants it again, so
            -- the file's intent (a column clients must not write) would be lost without a word.
            -- A column with no privileges of its own yet (attacl null) is new, not revoked.
            SELECT 6, format('%s (%s) was revoked from ferry_app, which the rule grants (it is granted again; '
                             || 'to keep clients from writing a column, declare it in the rule: read_only => or fixed =>)',
                             upper(k.kind), string_agg(quote_ident(g.col), ', '))
              FROM (VALUES ('insert'), ('update')) k(kind)
              CROSS JOIN LATERAL jsonb_array_elements_text(ferry.rules_writable(c.oid) -> k.kind) g(col)
              JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname = g.col AND a.attacl IS NOT NULL
             WHERE NOT (ferry.rules_granted(c.oid) -> k.kind) ? g.col
             GROUP BY k.kind
          ) x
         ORDER BY r.table_oid::text, x.n, x.repair
        """
}
