import FerryPostgres
import Foundation

/// Reads the resources from PostgreSQL's catalog in one query.
///
/// It runs as the serve role, so "insertable" and "updatable" come from that
/// role's real column privileges: what the API offers is what the database
/// will allow.
public enum SchemaIntrospector {
    /// The catalog query of `schema`. Builds JSON in PostgreSQL so that one
    /// round trip returns everything (from the catalog itself, not through
    /// `ferry.type_chain`: a server reads the schema of a database whose
    /// function files are of another release too): `tables`, and `has_public_rows`, whether any
    /// rule makes rows public (`ferry.sync_public`, core 0025); each table's
    /// `public` which flag makes its rows public: its own, or that of the owned
    /// table its child rules read through (``Resource/publicRows``).
    static func query(schema: String) -> SQLQuery {
        """
        SELECT coalesce(json_agg(t ORDER BY t.name), '[]') AS tables,
               EXISTS (SELECT 1 FROM ferry.sync_rules r WHERE r.public_column IS NOT NULL) AS has_public_rows
          FROM (
          SELECT c.relname AS name, n.nspname AS schema,
            (SELECT json_agg(json_build_object(
                'name', a.attname,
                'type', format_type(a.atttypid, a.atttypmod),
                'base_type', dom.base_type,
                -- A domain's NOT NULL holds like the column's own (DomainChainSQL).
                'nullable', NOT (a.attnotnull OR dom.not_null),
                'has_default', a.atthasdef OR a.attidentity <> '' OR dom.default_sql IS NOT NULL,
                -- A generated column is the database's to write; so is an identity column
                -- (a create names every column it writes and a PUT resets what it leaves
                -- out, so neither could leave one to its sequence), but for id, which ferry
                -- check reports (offline_unsafe_id).
                'insertable', has_column_privilege(c.oid, a.attnum, 'INSERT') AND a.attgenerated = ''
                              AND (a.attidentity = '' OR a.attname = 'id'),
                'updatable', has_column_privilege(c.oid, a.attnum, 'UPDATE') AND a.attgenerated = ''
                             AND (a.attidentity = '' OR a.attname = 'id'),
                'references', (SELECT fc.relname FROM pg_constraint f JOIN pg_class fc ON fc.oid = f.confrelid
                               WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.conkey = ARRAY[a.attnum]
                               LIMIT 1),
                -- The column's default, else its domain's: a create that leaves the column
                -- out writes it (CreateSQL), so a domain's default must be it.
                -- (A generated column's pg_attrdef entry is its expression, no default.)
                'default_sql', CASE WHEN a.attgenerated = '' THEN
                                 coalesce((SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
                                            WHERE d.adrelid = c.oid AND d.adnum = a.attnum), dom.default_sql) END,
                'comment', col_description(c.oid, a.attnum)
              ) ORDER BY a.attnum)
             FROM pg_attribute a
             CROSS JOIN LATERAL \(sql: DomainChainSQL.lateral(type: "a.atttypid", typmod: "a.atttypmod")) dom
             WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
               AND a.attname NOT LIKE '\\_ferry\\_%') AS columns,
            (SELECT coalesce(json_agg((SELECT json_agg(ka.attname ORDER BY ka.attnum)
                                       FROM pg_attribute ka
                                       WHERE ka.attrelid = c.oid AND ka.attnum = ANY(i.indkey))), '[]')
             FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique AND NOT i.indisprimary) AS unique_keys,
            (SELECT json_object_agg(k.name, k.columns) FROM (
               SELECT con.conname AS name,
                      (SELECT json_agg(ka.attname ORDER BY ka.attnum) FROM pg_attribute ka
                        WHERE ka.attrelid = c.oid AND ka.attnum = ANY(con.conkey)) AS columns
                 FROM pg_constraint con WHERE con.conrelid = c.oid AND con.conkey IS NOT NULL
               UNION ALL
               SELECT ic.relname, (SELECT json_agg(ka.attname ORDER BY ka.attnum) FROM pg_attribute ka
                                    WHERE ka.attrelid = c.oid AND ka.attnum = ANY(i.indkey))
                 FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                WHERE i.indrelid = c.oid AND i.indisunique
               UNION ALL
               -- A domain's CHECK (its error names no table nor column): the columns of
               -- that domain, or of a domain over it; a table's constraint of the same name wins.
               SELECT dc.conname, json_agg(da.attname ORDER BY da.attnum)
                 FROM pg_attribute da
                 CROSS JOIN LATERAL \(sql: DomainChainSQL.lateral(type: "da.atttypid", typmod: "da.atttypmod")) dom
                 JOIN pg_constraint dc ON dc.contypid = ANY (dom.types) AND dc.contype = 'c'
                WHERE da.attrelid = c.oid AND da.attnum > 0 AND NOT da.attisdropped
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint tc WHERE tc.conrelid = c.oid AND tc.conname = dc.conname)
                  AND NOT EXISTS (SELECT 1 FROM pg_index ti JOIN pg_class tic ON tic.oid = ti.indexrelid
                                   WHERE ti.indrelid = c.oid AND ti.indisunique AND tic.relname = dc.conname)
                GROUP BY dc.conname) k) AS constraints,
            (SELECT json_object_agg(p.command, p.names) FROM (
               SELECT CASE polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE'
                                  WHEN 'd' THEN 'DELETE' ELSE 'ALL' END AS command,
                      json_agg(polname ORDER BY polname) AS names
                 FROM pg_policy WHERE polrelid = c.oid GROUP BY 1) p) AS policies,
            (WITH RECURSIVE up (table_oid, kind, target_table, public_column, depth) AS (
               SELECT r.table_oid, r.kind, r.target_table, r.public_column, 0
                 FROM ferry.sync_rules r WHERE r.table_oid = c.oid
               UNION ALL
               SELECT p.table_oid, p.kind, p.target_table, p.public_column, up.depth + 1
                 FROM up JOIN ferry.sync_rules p ON p.table_oid = up.target_table
                WHERE up.kind = 'child' AND up.depth < 6)
             SELECT json_build_object('flag', up.public_column, 'resource', pc.relname)
               FROM up JOIN pg_class pc ON pc.oid = up.table_oid
              WHERE up.kind = 'owned' AND up.public_column IS NOT NULL
              LIMIT 1) AS public,
            (SELECT json_build_object(
                      'mark', 'ferry.' || quote_ident(p.proname), 'table', c.oid::int8,
                      'scopes', coalesce((SELECT json_agg(json_build_object('table', sc.scope_table::oid::int8, 'column', sc.member_column)
                                                          ORDER BY sc.scope_table::oid)
                                            FROM ferry.access_scopes sc WHERE sc.member_table = c.oid), '[]'))
               FROM pg_proc p
              WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname = 'sync_mark_' || c.oid
                AND has_function_privilege(p.oid, 'EXECUTE')
                AND NOT EXISTS (SELECT 1 FROM ferry.access_scopes sc
                                 WHERE sc.member_table = c.oid AND has_column_privilege(c.oid, sc.member_column, 'UPDATE'))
            ) AS row_hints
          FROM ferry.sync_resources s
          JOIN pg_class c ON c.oid = s.table_oid
          JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = \(bind: schema) AND has_table_privilege(c.oid, 'SELECT')
        ) t
        """
    }

    /// Introspects `schema` over `connection`.
    public static func load(schema: String, connection: PostgresConnection) throws -> SchemaCatalog {
        let row = try connection.run(query(schema: schema)).first
        let json = try row?.string("tables") ?? "[]"
        let tables = try JSONDecoder().decode([Resource].self, from: Data(json.utf8))
        return SchemaCatalog(tables: tables, hasPublicRows: try row?.bool("has_public_rows") ?? false)
    }
}
