// The Index statement: its filters and order, how paging wraps it, and the
// access scopes it reads through.

/// The Index statement: filter, order, first page, total and collection ETag
/// in ONE scan.
///
/// The window aggregates run over every matching row before LIMIT, so
/// `count(*) OVER ()` is the total and the summed hash of `(id, revision)` is
/// a fingerprint of the whole result: it changes when any matching row
/// changes (its revision moves), appears, or disappears (deleted, or edited
/// out of the filter). Order follows from the rows and the query, so the
/// fingerprint needs no order. Rows are rendered to JSON only for the page.
/// One row out: `data` (a json array), `total` and `fingerprint`.
struct IndexSQL {
    let resource: Resource
    let query: IndexQuery
    /// Scopes the rows are read through (``ScopeDrive``).
    var drives: [ScopeDrive] = []

    /// The filters over alias `t`, with how many parameters they bind (`$1`…`$n`).
    var condition: (sql: String, parameterCount: Int) {
        var conditions: [String] = []
        var n = 0
        for filter in query.filters {
            n += 1
            let type = resource.column(filter.column)?.filterType ?? "text"
            conditions.append("t.\(SQL.id(filter.column)) = ANY ($\(n)::\(type)[])")
        }
        for drive in drives {
            conditions.append("t.\(SQL.id(drive.column)) = ANY (ARRAY(SELECT s.\"id\" FROM \(drive.scopeTable) s))")
        }
        if query.modifiedSince != nil {
            n += 1
            conditions.append("t.\"last_modified\" > $\(n)::bigint")
        } else if !query.includeDeleted {
            conditions.append("NOT t.\"is_deleted\"")
        }
        return (conditions.isEmpty ? "true" : conditions.joined(separator: " AND "), n)
    }

    var sql: String {
        let (condition, n) = condition
        let limit = "$\(n + 1)::int"
        let order = orderBy(alias: "t")
        let rows = RowJSON(resource: resource)
        return """
            WITH m AS (
              SELECT t.*, count(*) OVER () AS "_ferry_total",
                     sum(hashtextextended(t."id"::text || ':' || t."revision"::text, 0)) OVER () AS "_ferry_hash"
                FROM \(resource.qualifiedName) t
               WHERE \(condition)
               ORDER BY \(order)
               LIMIT \(limit)
            )
            SELECT coalesce(json_agg(\(rows.view(SQL.column("m"))) ORDER BY \(orderBy(alias: "m"))), '[]')::text AS data,
                   coalesce(max(m."_ferry_total"), 0) AS total, coalesce(max(m."_ferry_hash"), 0)::text AS fingerprint
              FROM m
            """
    }

    /// The requested order, then id; ranked resources default to (rank, id).
    func orderBy(alias: String) -> String {
        var keys = query.order
        if keys.isEmpty, resource.isRanked { keys = [("rank", false)] }
        var parts = keys.map { "\(alias).\(SQL.id($0.column)) \($0.descending ? "DESC" : "ASC")" }
        parts.append("\(alias).\"id\" ASC")
        return parts.joined(separator: ", ")
    }
}

extension IndexSQL {
    /// The query as paging wraps it: the same filters, order, row JSON and
    /// parameters (``pagedBinds``).
    var paged: PagedIndexQuery {
        PagedIndexQuery(
            table: resource.qualifiedName, condition: condition.sql, orderBy: orderBy(alias: "t"),
            binds: pagedBinds, rowJSON: RowJSON(resource: resource).view(SQL.column("t")), rowVersion: #"t."revision""#)
    }

    /// The condition's binds: the query's without the limit, which paging binds itself.
    var pagedBinds: [Bind] { Array(query.binds.dropLast()) }
}

extension IndexSQL {
    /// `column = ANY (ids of the scope rows the caller can read)`: a condition
    /// Row Level Security imposes anyway on a member declared
    /// `read_through_scope` (migration 0015), stated so that PostgreSQL walks
    /// the member's index from each readable scope row instead of testing the
    /// policy on every row of the table.
    struct ScopeDrive: Sendable, Hashable {
        let column: String
        /// The scope's table, qualified and quoted; its key is `id`.
        let scopeTable: String
    }

    /// The scopes an Index of `resource` reads through: those it is declared to
    /// be readable only through, unless the query already filters their column
    /// (which drives the scan by itself).
    static func drives(_ resource: Resource, catalog: SchemaCatalog, scopes: [AccessScope], query: IndexQuery) -> [ScopeDrive] {
        scopes.compactMap { scope in
            guard scope.readThroughScope, scope.member == resource.name, scope.scope != resource.name,
                !query.filters.contains(where: { $0.column == scope.column }), let table = catalog[scope.scope]
            else { return nil }
            return ScopeDrive(column: scope.column, scopeTable: table.qualifiedName)
        }
    }
}
