import FerryPostgres

/// Keeps app migrations out of schema `ferry`: the objects there (tables with their
/// columns, constraints, triggers and policies; views; indexes; sequences; functions;
/// types; the schema's own privileges) are described before and after an app file runs,
/// in its transaction, and any difference refuses the file.
///
/// What an app may do in `ferry` is call Ferry's functions and write rows (declare an
/// access scope, enable sync), so rows are not compared, and neither are the update
/// trigger functions `ferry.enable_sync` generates per synced table
/// (`ferry.sync_update_<oid>`, `ferry.sync_notify_<oid>` from core 0017 and
/// `ferry.sync_reach_<oid>` from core 0022), nor the row hints functions generated
/// with them (`ferry.sync_hints_<oid>`, `ferry.sync_mark_<oid>`, functions/live.sql). A guard
/// against mistakes, not malice: migrations run as the owner role, which could undo any check.
enum FerrySchemaGuard {
    /// One line per object in schema `ferry`: its kind and name, then a digest of its
    /// definition and privileges.
    static let describe = """
        WITH ns AS (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'ferry')
        SELECT 'schema ferry' AS object, md5(concat_ws('|', n.nspowner, n.nspacl)) AS digest
          FROM pg_catalog.pg_namespace n WHERE n.oid = (SELECT oid FROM ns)
        UNION ALL
        SELECT CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'i' THEN 'index'
                              WHEN 'I' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 'c' THEN 'type'
                              WHEN 'f' THEN 'foreign table' ELSE 'table' END
               || ' ferry.' || quote_ident(c.relname),
               md5(concat_ws('|', c.relkind, c.relowner, c.relacl, c.relrowsecurity, c.relforcerowsecurity, c.reloptions,
                   (SELECT string_agg(concat_ws(':', a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                                                a.attacl, pg_get_expr(d.adbin, d.adrelid)), ',' ORDER BY a.attnum)
                      FROM pg_catalog.pg_attribute a
                      LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                   (SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), ',' ORDER BY conname)
                      FROM pg_catalog.pg_constraint WHERE conrelid = c.oid),
                   (SELECT string_agg(concat_ws(' ', tgname, tgfoid, tgenabled, tgtype), ',' ORDER BY tgname)
                      FROM pg_catalog.pg_trigger WHERE tgrelid = c.oid AND NOT tgisinternal),
                   (SELECT string_agg(concat_ws(' ', polname, polcmd, polpermissive, polroles,
                                                pg_get_expr(polqual, polrelid), pg_get_expr(polwithcheck, polrelid)),
                                      ',' ORDER BY polname)
                      FROM pg_catalog.pg_policy WHERE polrelid = c.oid),
                   CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END,
                   CASE WHEN c.relkind IN ('i', 'I') THEN pg_get_indexdef(c.oid) END))
          FROM pg_catalog.pg_class c WHERE c.relnamespace = (SELECT oid FROM ns)
        UNION ALL
        SELECT 'function ferry.' || quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')',
               md5(concat_ws('|', p.proowner, p.proacl, p.prosrc, p.proconfig, p.provolatile, p.prosecdef,
                             p.proisstrict, p.proleakproof, p.proparallel, p.prorettype))
          FROM pg_catalog.pg_proc p
         WHERE p.pronamespace = (SELECT oid FROM ns) AND p.proname !~ '^sync_(update|notify|reach|hints|mark)_[0-9]+$'
        UNION ALL
        SELECT 'type ferry.' || quote_ident(t.typname), md5(concat_ws('|', t.typowner, t.typacl, t.typtype))
          FROM pg_catalog.pg_type t
         WHERE t.typnamespace = (SELECT oid FROM ns) AND t.typrelid = 0 AND t.typcategory <> 'A'
        """

    /// The objects of schema `ferry` as `describe` sees them, by name.
    ///
    /// Names and definitions are written out with `search_path` set to `pg_catalog` for
    /// the one statement, so a file that changes the session's path (a plain `SET
    /// search_path`) does not make every object look altered; the path is put back.
    static func snapshot(_ connection: PostgresConnection) throws(PostgresError) -> [String: String] {
        let saved = try connection.query("SELECT current_setting('search_path') AS path").first?["path"] ?? nil
        _ = try connection.query("SELECT set_config('search_path', 'pg_catalog', true)")
        let result = try connection.query(describe)
        _ = try connection.query("SELECT set_config('search_path', \(bind: saved ?? "\"$user\", public"), true)" as PostgresStatement)
        var objects: [String: String] = [:]
        for row in result.rows {
            if let object = try row.string("object") { objects[object] = try row.string("digest") ?? "" }
        }
        return objects
    }

    /// What changed between two snapshots, one line per object, sorted:
    /// `function ferry.f(integer) created`, `table ferry.users altered`, `view ferry.v dropped`.
    static func changes(from before: [String: String], to after: [String: String]) -> [String] {
        var lines: [String] = []
        for (object, digest) in after {
            if let old = before[object] {
                if old != digest { lines.append("\(object) altered") }
            } else {
                lines.append("\(object) created")
            }
        }
        for object in before.keys where after[object] == nil { lines.append("\(object) dropped") }
        return lines.sorted()
    }
}
