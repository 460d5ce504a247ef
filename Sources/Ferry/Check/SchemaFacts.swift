import FerryPostgres
import Foundation

/// What `ferry check` reads of a database: every synced table and what guards it,
/// as one catalog query returns it (`SchemaFacts.query`).
///
/// Privileges are the serve role's (the `role` the query is given), so a fact says
/// what requests will meet, not what the owner could do.
public struct SchemaFacts: Decodable, Sendable, Equatable {
    /// The schema `ferry serve` serves (`database.schema`).
    public var servedSchema: String
    /// The serve role the privileges are those of.
    public var role: String
    public var tables: [Table]
    /// Views and `SECURITY DEFINER` functions the serve role may read or call that read
    /// a synced table past its Row Level Security (`SchemaFacts.exposuresQuery`).
    public var exposures: [Exposure] = []
    /// The serve role's `lc_messages`, read on its own connection: the language PostgreSQL
    /// words its errors in for it ("" when unknown: read as another role, or the server's
    /// environment's).
    public var messagesLocale = ""

    public struct Table: Decodable, Sendable, Equatable {
        /// `schema.table`, quoted where it must be, as SQL writes it.
        public var name: String
        public var schema: String
        public var relname: String
        public var rowLevelSecurity: Bool
        /// The serve role may read it, and use its schema.
        public var readable: Bool
        public var primaryKey: [String]
        public var columns: [Column]
        public var foreignKeys: [ForeignKey]
        /// The leading columns of each index that is not partial.
        public var indexes: [[String]]
        public var policies: [Policy]
        public var triggers: [Trigger]
        /// Its declarative sync rule, if any (core migration 0019).
        public var rule: Rule?
        /// The access scopes it is a member of (`ferry.access_scopes`).
        public var scopes: [Scope]
        /// Table privileges of the serve role that Ferry never uses: `DELETE`, `TRUNCATE`, `TRIGGER`.
        public var extraPrivileges: [String]
        /// Row Level Security does not apply to the serve role here: it owns the table
        /// (without `FORCE ROW LEVEL SECURITY`), or is a superuser or `BYPASSRLS`.
        public var servedPastRowLevelSecurity: Bool

        public func column(_ name: String) -> Column? { columns.first { $0.name == name } }
    }

    public struct Column: Decodable, Sendable, Equatable {
        public var name: String
        public var type: String
        /// The type its values are: for a domain, the base type (``DomainChainSQL``); else `type`.
        public var baseType: String
        public var notNull: Bool
        public var hasDefault: Bool
        public var generated: Bool
        public var insertable: Bool
        public var updatable: Bool
        /// Its default expression as PostgreSQL prints it, `GENERATED AS IDENTITY`, or nil.
        public var defaultExpression: String?
    }

    public struct ForeignKey: Decodable, Sendable, Equatable {
        public var name: String
        public var columns: [String]
        /// The referenced table, as SQL writes it.
        public var target: String
    }

    public struct Policy: Decodable, Sendable, Equatable {
        public var name: String
        /// `SELECT`, `INSERT`, `UPDATE`, `DELETE` or `ALL`.
        public var command: String
        /// Permissive policies are OR-ed (any one admits a row); restrictive ones AND-ed.
        public var permissive: Bool
        /// Its `USING` and `WITH CHECK` expressions as PostgreSQL prints them.
        public var using: String?
        public var check: String?
        /// The functions of the database (not PostgreSQL's own) its expressions call.
        public var functions: [Function]
    }

    public struct Function: Decodable, Sendable, Equatable {
        /// `schema.name(argument types)`.
        public var signature: String
        /// `i`, `s` or `v`: immutable, stable or volatile.
        public var volatility: String
        public var securityDefiner: Bool
        /// The serve role may execute it.
        public var executable: Bool
    }

    public struct Trigger: Decodable, Sendable, Equatable {
        public var name: String
        public var function: String
        /// Its function (or one it names) records access granted and revoked.
        public var recordsGrants: Bool
        public var recordsRevocations: Bool
    }

    public struct Rule: Decodable, Sendable, Equatable {
        public var kind: String
        public var column: String
        public var readOnly: [String]
        public var fixed: [String]
        public var links: [String]
        /// A members rule's column of the user given access.
        public var memberColumn: String?
        /// The names of the policies the rule last generated (`ferry_rules_*`).
        public var policies: [String]
    }

    /// A view or function that returns synced rows as its owner sees them.
    public struct Exposure: Decodable, Sendable, Equatable {
        /// `view`, `materialized view` or `function`.
        public var kind: String
        /// As SQL writes it: `app.all_lists`, or `app.every_list(uuid)` for a function.
        public var name: String
        /// The synced tables it reads.
        public var reads: [String]
    }

    public struct Scope: Decodable, Sendable, Equatable {
        public var scope: String
        public var column: String
        public var readThroughScope: Bool
    }

    /// Reads the facts of every synced table, with `role`'s privileges.
    public static func load(servedSchema: String, role: String, connection: PostgresConnection) throws -> SchemaFacts {
        var binds = SQLBinds()
        let roleParameter = binds.bind(.text(role))
        let json = try connection.run(binds.statement(query(role: roleParameter))).first?.string("tables") ?? "[]"
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let tables = try decoder.decode([Table].self, from: Data(json.utf8))
        let exposed = try connection.run(binds.statement(exposuresQuery(role: roleParameter))).first?.string("exposures") ?? "[]"
        let exposures = try decoder.decode([Exposure].self, from: Data(exposed.utf8))
        // Only on the serve role's own connection (`ferry check`, `ferry serve`): `ferry migrate`
        // reads the facts as the owner, whose setting says nothing of the serve role's.
        let messages = try connection.run(
            binds.statement("SELECT CASE WHEN current_user = \(roleParameter) THEN current_setting('lc_messages') ELSE '' END AS messages")
        ).first?.string("messages")
        return SchemaFacts(
            servedSchema: servedSchema, role: role, tables: tables, exposures: exposures, messagesLocale: messages ?? "")
    }

    /// The catalog query, with the privileges of the serve role bound as `role`.
    /// One JSON array, `tables`, one object per synced table.
    static func query(role: SQLParameter) -> String {
        """
        SELECT coalesce(json_agg(t ORDER BY t.name), '[]') AS tables FROM (
          SELECT c.oid::regclass::text AS name, n.nspname AS schema, c.relname,
            c.relrowsecurity AS row_level_security,
            has_table_privilege(\(role), c.oid, 'SELECT') AND has_schema_privilege(\(role), n.oid, 'USAGE') AS readable,
            coalesce((SELECT json_agg(a.attname ORDER BY k.n) FROM pg_index i
                        CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, n)
                        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                       WHERE i.indrelid = c.oid AND i.indisprimary), '[]') AS primary_key,
            (SELECT json_agg(json_build_object(
                 'name', a.attname, 'type', format_type(a.atttypid, a.atttypmod), 'base_type', dom.base_type, 'not_null', a.attnotnull OR dom.not_null,
                 'has_default', a.atthasdef OR a.attidentity <> '' OR dom.default_sql IS NOT NULL, 'generated', a.attgenerated <> '',
                 'insertable', has_column_privilege(\(role), c.oid, a.attnum, 'INSERT'),
                 'updatable', has_column_privilege(\(role), c.oid, a.attnum, 'UPDATE'),
                 'default_expression', CASE WHEN a.attidentity <> '' THEN 'GENERATED AS IDENTITY'
                                            ELSE (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
                                                   WHERE d.adrelid = c.oid AND d.adnum = a.attnum) END) ORDER BY a.attnum)
               FROM pg_attribute a
              CROSS JOIN LATERAL \(DomainChainSQL.lateral(type: "a.atttypid", typmod: "a.atttypmod")) dom
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND left(a.attname, 7) <> '_ferry_') AS columns,
            coalesce((SELECT json_agg(json_build_object(
                 'name', f.conname, 'target', f.confrelid::regclass::text,
                 'columns', (SELECT json_agg(a.attname ORDER BY k.n) FROM unnest(f.conkey) WITH ORDINALITY k(attnum, n)
                               JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum)) ORDER BY f.conname)
               FROM pg_constraint f WHERE f.conrelid = c.oid AND f.contype = 'f'), '[]') AS foreign_keys,
            coalesce((SELECT json_agg((SELECT json_agg(a.attname ORDER BY k.n) FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n)
                                         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum))
               FROM pg_index i WHERE i.indrelid = c.oid AND i.indpred IS NULL), '[]') AS indexes,
            coalesce((SELECT json_agg(json_build_object(
                 'name', p.polname,
                 'command', CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE'
                                          WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
                 'permissive', p.polpermissive,
                 'using', pg_get_expr(p.polqual, p.polrelid), 'check', pg_get_expr(p.polwithcheck, p.polrelid),
                 'functions', coalesce((
                     SELECT json_agg(json_build_object(
                              'signature', format('%s.%s(%s)', quote_ident(fn.nspname), quote_ident(pr.proname),
                                                  pg_get_function_identity_arguments(pr.oid)),
                              'volatility', pr.provolatile, 'security_definer', pr.prosecdef,
                              'executable', has_function_privilege(\(role), pr.oid, 'EXECUTE')) ORDER BY pr.oid)
                       FROM pg_proc pr JOIN pg_namespace fn ON fn.oid = pr.pronamespace
                      WHERE pr.oid IN (SELECT m[1]::oid FROM regexp_matches(
                                          coalesce(p.polqual::text, '') || coalesce(p.polwithcheck::text, ''),
                                          ':funcid ([0-9]+)', 'g') m)
                        AND fn.nspname NOT IN ('pg_catalog', 'information_schema')), '[]')) ORDER BY p.polname)
               FROM pg_policy p WHERE p.polrelid = c.oid), '[]') AS policies,
            coalesce((SELECT json_agg(json_build_object(
                 'name', tg.tgname, 'function', tg.tgfoid::regproc::text,
                 'records_grants', pr.prosrc LIKE '%record_access_grant%',
                 'records_revocations', pr.prosrc LIKE '%record_access_revocation%') ORDER BY tg.tgname)
               FROM pg_trigger tg JOIN pg_proc pr ON pr.oid = tg.tgfoid
              WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal AND tg.tgenabled <> 'D'), '[]') AS triggers,
            (SELECT json_build_object('kind', r.kind, 'column', r.rule_column, 'read_only', r.read_only,
                                      'fixed', r.fixed, 'links', r.links, 'member_column', r.member_column,
                                      'policies', coalesce((SELECT json_agg(k ORDER BY k) FROM jsonb_object_keys(r.policies) k), '[]'))
               FROM ferry.sync_rules r WHERE r.table_oid = c.oid) AS rule,
            coalesce((SELECT json_agg(json_build_object(
                 'scope', s.scope_table::text, 'column', s.member_column, 'read_through_scope', s.read_through_scope)
                 ORDER BY s.scope_table::text)
               FROM ferry.access_scopes s WHERE s.member_table = c.oid AND s.scope_table <> c.oid), '[]') AS scopes,
            ARRAY(SELECT p FROM unnest(ARRAY['DELETE', 'TRUNCATE', 'TRIGGER']) p
                   WHERE has_table_privilege(\(role)::name, c.oid, p)) AS extra_privileges,
            (pg_has_role(\(role)::name, c.relowner, 'USAGE') AND NOT c.relforcerowsecurity)
              OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = \(role)::name AND (r.rolsuper OR r.rolbypassrls))
              AS served_past_row_level_security
          FROM ferry.synced_tables st
          JOIN pg_class c ON c.oid = st.table_oid
          JOIN pg_namespace n ON n.oid = c.relnamespace
        ) t
        """
    }

    /// Views and `SECURITY DEFINER` functions that read a synced table as a role Row
    /// Level Security does not apply to, and that the serve role `role` may read or
    /// call: one JSON array, `exposures`.
    ///
    /// A view reads its tables as its owner unless it is `security_invoker`; a
    /// materialized view was filled with no user at all. A function's tables are those
    /// it depends on (a SQL-standard body) or names in its source. Not listed: Ferry's
    /// own (schema `ferry`, `_ferry_*`), trigger functions, and functions a policy
    /// calls (the way hand-written policies read another table without recursing).
    static func exposuresQuery(role: SQLParameter) -> String {
        """
        WITH synced AS (
          SELECT c.oid, c.oid::regclass::text AS name, c.relname, c.relowner, c.relforcerowsecurity
            FROM ferry.synced_tables st JOIN pg_class c ON c.oid = st.table_oid),
        bypass AS (
          -- Whether role r reads synced table s past its policies.
          SELECT r.oid AS role, s.oid AS tab
            FROM pg_roles r CROSS JOIN synced s
           WHERE r.rolsuper OR r.rolbypassrls OR (pg_has_role(r.oid, s.relowner, 'USAGE') AND NOT s.relforcerowsecurity)),
        policy_functions AS (
          SELECT m[1]::oid AS oid FROM pg_policy p,
                 regexp_matches(coalesce(p.polqual::text, '') || coalesce(p.polwithcheck::text, ''), ':funcid ([0-9]+)', 'g') m),
        found AS (
          SELECT CASE v.relkind WHEN 'm' THEN 'materialized view' ELSE 'view' END AS kind, v.oid::regclass::text AS name, s.name AS reads
            FROM pg_class v
            JOIN pg_namespace vn ON vn.oid = v.relnamespace
            JOIN pg_rewrite rw ON rw.ev_class = v.oid
            JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = rw.oid AND d.refclassid = 'pg_class'::regclass
            JOIN synced s ON s.oid = d.refobjid
           WHERE v.relkind IN ('v', 'm') AND vn.nspname NOT IN ('pg_catalog', 'information_schema', 'ferry')
             AND has_table_privilege(\(role), v.oid, 'SELECT') AND has_schema_privilege(\(role), vn.oid, 'USAGE')
             AND (v.relkind = 'm' OR (
                   NOT EXISTS (SELECT 1 FROM unnest(v.reloptions) o WHERE o ~* '^security_invoker=(true|on|yes|1)$')
                   AND EXISTS (SELECT 1 FROM bypass b WHERE b.role = v.relowner AND b.tab = s.oid)))
          UNION
          SELECT 'function', f.oid::regprocedure::text, s.name
            FROM pg_proc f
            JOIN pg_namespace fn ON fn.oid = f.pronamespace
            JOIN synced s ON EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = f.oid
                                        AND d.refclassid = 'pg_class'::regclass AND d.refobjid = s.oid)
                          OR (s.relname ~ '^\\w+$' AND f.prosrc ~* ('\\m' || s.relname || '\\M'))
                          OR (s.relname !~ '^\\w+$' AND strpos(lower(f.prosrc), lower(s.relname)) > 0)
           WHERE f.prosecdef AND f.prokind = 'f' AND f.prorettype <> 'trigger'::regtype
             AND fn.nspname NOT IN ('pg_catalog', 'information_schema', 'ferry') AND left(f.proname, 7) <> '_ferry_'
             AND f.oid NOT IN (SELECT oid FROM policy_functions)
             AND has_function_privilege(\(role), f.oid, 'EXECUTE') AND has_schema_privilege(\(role), fn.oid, 'USAGE')
             AND EXISTS (SELECT 1 FROM bypass b WHERE b.role = f.proowner AND b.tab = s.oid))
        SELECT coalesce(json_agg(json_build_object('kind', kind, 'name', name, 'reads', reads) ORDER BY name), '[]') AS exposures
          FROM (SELECT kind, name, array_agg(reads ORDER BY reads) AS reads FROM found GROUP BY kind, name) x
        """
    }
}
