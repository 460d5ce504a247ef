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
    /// printing UUIDs as text (`array_to_string`) for 100,000 ids. The first page's
    /// ids go through an array so that the planner sees a short list and looks the
    /// rows up by primary key (joined to the bytes directly, it hashes the table).
    /// The aggregate's sort is the one in the statement: `ORDER BY` inside the
    /// aggregate is the only order PostgreSQL guarantees for it.
    static func firstPage(_ query: PagedIndexQuery, limit: Int) -> PlannedStatement {
        var binds = SQLBinds(after: query.binds)
        let limitParameter = "\(binds.bind(.int(Int64(limit))))::int"
        let sql = """
            WITH s AS MATERIALIZED (
              SELECT string_agg(uuid_send(t.id), ''::bytea ORDER BY \(query.orderBy)) AS ids, count(*) AS total,
                     coalesce(sum(\(query.versionHash)), 0)::text AS hash
                FROM \(query.table) t WHERE \(query.condition)
            )
            SELECT ferry.current_user_id()::text AS user_id, s.total,
                   CASE WHEN s.total > \(limitParameter) THEN encode(s.ids, 'hex') END AS snapshot,
                   (SELECT coalesce(json_agg(\(query.rowJSON) ORDER BY x.o), '[]'::json)
                      FROM unnest(ARRAY(
                             SELECT encode(substring(s.ids FROM g * 16 + 1 FOR 16), 'hex')::uuid
                               FROM generate_series(0, least(s.total::int, \(limitParameter)) - 1) AS g ORDER BY g
                           )) WITH ORDINALITY AS x(id, o)
                      JOIN \(query.table) t ON t.id = x.id) AS data,
                   s.hash
              FROM s
            """
        return binds.statement(sql)
    }

    /// A later page: the rows of `ids` in their current state, in snapshot order,
    /// tombstones for rows deleted since. The join drops ids the caller can no longer
    /// read (RLS) or that were purged, so nothing is revealed about them. The rows are
    /// only read when the caller is the snapshot's user. Columns: `user_id`, `data`,
    /// `count` (rows returned), `hash` (of their `(id, revision)`, for the ETag).
    static func laterPage(_ query: PagedIndexQuery, ids: String, userID: String) -> PlannedStatement {
        let statement: SQLQuery = """
            SELECT ferry.current_user_id()::text AS user_id, p.*
              FROM (SELECT coalesce(json_agg(\(sql: query.rowJSON) ORDER BY x.o), '[]'::json) AS data,
                           count(*) AS count, coalesce(sum(\(sql: query.versionHash)), 0)::text AS hash
                      FROM unnest(\(bind: ids)::uuid[]) WITH ORDINALITY AS x(id, o)
                      JOIN \(sql: query.table) t ON t.id = x.id
                     WHERE ferry.current_user_id() = \(bind: userID)::uuid) AS p
            """
        return statement.statement
    }

    /// Lets page 1 sort a large result in memory (100,000 rows need about 11 MB;
    /// the default 4 MB would spill to disk). Transaction-local.
    static let sortMemory = PlannedStatement("SET LOCAL work_mem = '64MB'")

    /// The caller's id, for answers that need only the identity.
    static let currentUser = PlannedStatement("SELECT ferry.current_user_id()::text AS user_id")
}
