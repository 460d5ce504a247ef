import FerryPostgres

/// The two statements of paged Index: one builds page 1 and the snapshot, one reads
/// a later page. Each is one statement in the request's transaction.
enum PagingSQL {
    /// Page 1: the complete ordered id list (one aggregate over the filtered,
    /// RLS-checked rows, sorted once), its length, the list as text when it needs
    /// a snapshot, the first page's rows as JSON, and the hash of every `(id,
    /// revision)` of the result for the collection ETag. Columns: `user_id`, `total`,
    /// `snapshot` (null when the result fits one page), `data`, `hash`.
    static func firstPage(_ query: PagedIndexQuery, limit: Int) -> PostgresStatement {
        let limitParameter = "$\(query.parameters.count + 1)::int"
        let sql = """
            WITH s AS MATERIALIZED (
              SELECT coalesce(array_agg(t.id ORDER BY \(query.orderBy)), '{}'::uuid[]) AS ids,
                     coalesce(sum(\(query.versionHash)), 0)::text AS hash
                FROM \(query.table) t WHERE \(query.condition)
            )
            SELECT ferry.current_user_id()::text AS user_id,
                   cardinality(s.ids) AS total,
                   CASE WHEN cardinality(s.ids) > \(limitParameter) THEN array_to_string(s.ids, '') END AS snapshot,
                   (SELECT coalesce(json_agg(\(query.rowJSON) ORDER BY x.o), '[]'::json)
                      FROM unnest(s.ids[1:\(limitParameter)]) WITH ORDINALITY AS x(id, o)
                      JOIN \(query.table) t ON t.id = x.id) AS data,
                   s.hash
              FROM s
            """
        return PostgresStatement(sql, query.parameters + [String(limit)])
    }

    /// A later page: the rows of `ids` in their current state, in snapshot order,
    /// tombstones for rows deleted since. The join drops ids the caller can no longer
    /// read (RLS) or that were purged, so nothing is revealed about them. The rows are
    /// only read when the caller is the snapshot's user. Columns: `user_id`, `data`,
    /// `count` (rows returned), `hash` (of their `(id, revision)`, for the ETag).
    static func laterPage(_ query: PagedIndexQuery, ids: String, userID: String) -> PostgresStatement {
        let sql = """
            SELECT ferry.current_user_id()::text AS user_id, p.*
              FROM (SELECT coalesce(json_agg(\(query.rowJSON) ORDER BY x.o), '[]'::json) AS data,
                           count(*) AS count, coalesce(sum(\(query.versionHash)), 0)::text AS hash
                      FROM unnest($1::uuid[]) WITH ORDINALITY AS x(id, o)
                      JOIN \(query.table) t ON t.id = x.id
                     WHERE ferry.current_user_id() = $2::uuid) AS p
            """
        return PostgresStatement(sql, [ids, userID])
    }

    /// The caller's id, for answers that need only the identity.
    static let currentUser = PostgresStatement("SELECT ferry.current_user_id()::text AS user_id")
}
