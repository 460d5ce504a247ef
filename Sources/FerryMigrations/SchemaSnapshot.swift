import FerryPostgres

/// Ferry's schema as text, for review: every table of schema `ferry` with its columns,
/// constraints and grants, its views, sequences, indexes and types, every function's
/// current definition (`pg_get_functiondef`, its grants and comment), and the triggers
/// and policies of Ferry's tables, in a stable order. The bookkeeping tables and the
/// trigger functions generated per app table (`ferry.sync_update_<oid>` and its kin)
/// are left out, so it does not depend on the app or on the migrations' history.
///
/// `migrations/schema.snapshot.sql` holds it for a fresh database, so that a review sees
/// the current body of every function; `SchemaSnapshotTests` fails when the file is
/// stale, and `bash .ci/schema-snapshot.sh` writes it again. Role names other than the
/// owner's appear as they are (the owner's grants are left out), and the text is
/// PostgreSQL's own deparsing, so it is written by the major version CI runs.
public enum SchemaSnapshot {
    /// The snapshot of the database `connection` is on, read in a transaction of its own
    /// with `search_path` set to `pg_catalog` alone, so that every name is qualified.
    public static func text(_ connection: PostgresConnection) throws -> String {
        try connection.transaction { connection in
            try connection.execute("SET LOCAL search_path = pg_catalog")
            return try connection.query(query).first?["snapshot"] ?? ""
        }
    }

    static let query = #"""
        WITH ns AS (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'ferry'),
        rel AS (
            SELECT c.oid, c.relname, c.relkind, c.relowner, c.relacl, c.relrowsecurity, c.relforcerowsecurity
              FROM pg_catalog.pg_class c
             WHERE c.relnamespace = (SELECT oid FROM ns) AND c.relname NOT IN ('schema_migrations', 'schema_repeatables')
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
                                WHERE i.indexrelid = c.oid AND t.relname IN ('schema_migrations', 'schema_repeatables'))
        ),
        grants AS (
            SELECT r.oid,
                   string_agg(format('  GRANT %s TO %s', p.privs, p.grantee), E'\n' ORDER BY p.grantee) AS lines
              FROM rel r
              CROSS JOIN LATERAL (
                SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(a.grantee::regrole::text) END AS grantee,
                       string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) AS privs
                  FROM pg_catalog.aclexplode(COALESCE(r.relacl, pg_catalog.acldefault(
                           CASE WHEN r.relkind = 'S' THEN 's' ELSE 'r' END::"char", r.relowner))) a
                 WHERE a.grantee <> r.relowner
                 GROUP BY 1) p
             GROUP BY r.oid
        ),
        item AS (
            SELECT 1 AS kind, r.relname::text AS key, 
                   format('TABLE ferry.%I%s', r.relname,
                          CASE WHEN r.relrowsecurity THEN ' (row level security' || CASE WHEN r.relforcerowsecurity THEN ', forced' ELSE '' END || ')' ELSE '' END)
                   || E'\n' || (SELECT string_agg(format('  %I %s%s%s%s', a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
                                                   CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END,
                                                   CASE WHEN d.adbin IS NOT NULL THEN ' DEFAULT ' || pg_catalog.pg_get_expr(d.adbin, d.adrelid) ELSE '' END,
                                                   CASE WHEN a.attgenerated = 's' THEN ' (generated)' ELSE '' END),
                                            E'\n' ORDER BY a.attnum)
                                  FROM pg_catalog.pg_attribute a
                                  LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                                 WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped)
                   || COALESCE(E'\n' || (SELECT string_agg(format('  CONSTRAINT %I %s', k.conname, pg_catalog.pg_get_constraintdef(k.oid)),
                                                           E'\n' ORDER BY k.conname)
                                            FROM pg_catalog.pg_constraint k WHERE k.conrelid = r.oid), '')
                   || COALESCE(E'\n' || g.lines, '') AS body
              FROM rel r LEFT JOIN grants g ON g.oid = r.oid WHERE r.relkind IN ('r', 'p')
            UNION ALL
            SELECT 2, r.relname::text, format('VIEW ferry.%I AS', r.relname) || E'\n' || pg_catalog.pg_get_viewdef(r.oid)
                   || COALESCE(E'\n' || g.lines, '')
              FROM rel r LEFT JOIN grants g ON g.oid = r.oid WHERE r.relkind IN ('v', 'm')
            UNION ALL
            SELECT 3, r.relname::text, format('SEQUENCE ferry.%I', r.relname) || COALESCE(E'\n' || g.lines, '')
              FROM rel r LEFT JOIN grants g ON g.oid = r.oid WHERE r.relkind = 'S'
            UNION ALL
            SELECT 4, r.relname::text, pg_catalog.pg_get_indexdef(r.oid) || ';'
              FROM rel r WHERE r.relkind IN ('i', 'I')
            UNION ALL
            SELECT 5, t.typname::text, format('TYPE ferry.%I (%s)', t.typname, t.typtype)
              FROM pg_catalog.pg_type t
             WHERE t.typnamespace = (SELECT oid FROM ns) AND t.typrelid = 0 AND t.typcategory <> 'A'
            UNION ALL
            SELECT 6, p.oid::pg_catalog.regprocedure::text,
                   pg_catalog.pg_get_functiondef(p.oid) || ';'
                   || COALESCE((SELECT string_agg(format(E'\nGRANT EXECUTE TO %s',
                                                         CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(a.grantee::regrole::text) END),
                                                  '' ORDER BY 1)
                                  FROM pg_catalog.aclexplode(COALESCE(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
                                 WHERE a.grantee <> p.proowner), '')
                   || COALESCE(E'\nCOMMENT ' || pg_catalog.quote_literal(pg_catalog.obj_description(p.oid, 'pg_proc')), '')
              FROM pg_catalog.pg_proc p
             WHERE p.pronamespace = (SELECT oid FROM ns) AND p.proname !~ '^sync_(update|notify|reach|hints|mark)_[0-9]+$'
            UNION ALL
            SELECT 7, c.relname || ' ' || t.tgname, pg_catalog.pg_get_triggerdef(t.oid) || ';'
              FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
             WHERE c.relnamespace = (SELECT oid FROM ns) AND NOT t.tgisinternal
            UNION ALL
            SELECT 8, c.relname || ' ' || p.polname,
                   format('POLICY %I ON ferry.%I%s FOR %s TO %s', p.polname, c.relname,
                          CASE WHEN p.polpermissive THEN '' ELSE ' AS RESTRICTIVE' END,
                          CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE' WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
                          (SELECT string_agg(CASE WHEN o = 0 THEN 'PUBLIC' ELSE quote_ident(o::regrole::text) END, ', ' ORDER BY 1)
                             FROM unnest(p.polroles) o))
                   || COALESCE(E'\n  USING (' || pg_catalog.pg_get_expr(p.polqual, p.polrelid) || ')', '')
                   || COALESCE(E'\n  WITH CHECK (' || pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid) || ')', '')
              FROM pg_catalog.pg_policy p JOIN pg_catalog.pg_class c ON c.oid = p.polrelid
             WHERE c.relnamespace = (SELECT oid FROM ns)
        )
        SELECT string_agg(body, E'\n\n' ORDER BY kind, key COLLATE "C") || E'\n' AS snapshot FROM item
        """#
}
