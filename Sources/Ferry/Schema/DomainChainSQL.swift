/// What a column's type says through its domains, as one catalog subquery that
/// the introspection (``SchemaIntrospector``) and `ferry check` (``SchemaFacts``)
/// join laterally, so both read a domain the same way.
///
/// A column typed with a domain (or a domain over a domain) takes the base type's
/// values, and every level's NOT NULL, CHECK and DEFAULT: PostgreSQL applies the
/// nearest level's default when an insert leaves the column out, and refuses a
/// null at any level that says NOT NULL. The columns it gives, for a type that is
/// no domain, are the type itself, no NOT NULL and no default.
///
/// Plain catalog SQL, not `ferry.type_chain`: a server reads the schema of a
/// database whose function files may be another release's.
enum DomainChainSQL {
    /// `(SELECT ...)` over the type `type` with modifier `typmod` (SQL expressions of the
    /// outer query), giving
    /// - `base_type`: the base type as `format_type` prints it, with the domain's length or precision;
    /// - `types`: the type and each domain under it, as `oid[]`;
    /// - `not_null`: whether some domain of the chain is NOT NULL;
    /// - `default_sql`: the nearest domain default as SQL (`pg_get_expr`), or NULL.
    static func lateral(type: String, typmod: String) -> String {
        """
        (WITH RECURSIVE d (type, typmod, depth) AS (
                SELECT \(type), \(typmod), 0
                UNION ALL
                SELECT t.typbasetype, t.typtypmod, d.depth + 1 FROM pg_type t JOIN d ON t.oid = d.type
                 WHERE t.typtype = 'd' AND d.depth < 32)
         SELECT (array_agg(format_type(d.type, d.typmod) ORDER BY d.depth DESC))[1] AS base_type,
                array_agg(d.type ORDER BY d.depth) AS types,
                coalesce(bool_or(dt.typtype = 'd' AND dt.typnotnull), false) AS not_null,
                (array_agg(pg_get_expr(dt.typdefaultbin, 0) ORDER BY d.depth)
                   FILTER (WHERE dt.typtype = 'd' AND dt.typdefaultbin IS NOT NULL))[1] AS default_sql
           FROM d JOIN pg_type dt ON dt.oid = d.type)
        """
    }
}
