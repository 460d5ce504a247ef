import FerryPostgres

/// The two statements of paged Index: one builds page 1 and the snapshot, one reads
/// a later page. Each is one statement in the request's transaction.
enum PagingSQL {
    /// Page 1: one aggregate over the filtered, RLS-checked rows, sorted once,
    /// yields the complete ordered id list (16 bytes per id, `uuid_send`), its
    /// length and the collection hash; the first page's rows are then read back by
    /// primary key in that order. Columns: `user_id`, `total`, `snapshot` (the ids
    /// as hex, null when the result fits one page), `data`, `hash`.
    ///
    /// `string_agg(uuid_send(id))` + `encode(hex)` is several times cheaper than
    /// printing UUIDs as text (`array_to_string`) for 100,000 ids.
    static func firstPage(_ query: PagedIndexQuery, limit: Int) -> PostgresStatement {
        let limitParameter = "$\(query.parameters.count + 1)::int"
        let sql = """
            WITH s AS MATERIALIZED (
              SELECT string_agg(uuid_send(t.id), ''::bytea ORDER BY \(query.orderBy)) AS ids, count(*) AS total,
                     coalesce(sum(\(query.versionHash)), 0)::text AS hash
                FROM \(query.table) t WHERE \(query.condition)
            )
            SELECT ferry.current_user_id()::text AS user_id, s.total,
                   CASE WHEN s.total > \(limitParameter) THEN encode(s.ids, 'hex') END AS snapshot,
                   (SELECT coalesce(json_agg(\(query.rowJSON) ORDER BY x.o), '[]'::json)
                      FROM generate_series(0, least(s.total::int, \(limitParameter)) - 1) AS x(o)
                      JOIN \(query.table) t ON t.id = encode(substring(s.ids FROM x.o * 16 + 1 FOR 16), 'hex')::uuid) AS data,
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
