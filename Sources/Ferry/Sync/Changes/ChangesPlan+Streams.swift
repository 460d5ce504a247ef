/// One resource's part of the feed: its own changed rows, the rows an access
/// grant brought into view, and the rows an access revocation took away,
/// each an index range scan after the cursor and below the frontier, merged
/// and de-duplicated (one entry per `(xid, id)`), numbered in id order.
///
/// A page from the start or from a frontier cursor (a poll) reads a table's
/// own changed rows through its read paths when it has them
/// (``ReadThrough``): per path, the `(column, _ferry_xid, id)` index from each
/// key the caller holds. Otherwise, and on the pages after a full one, the
/// `(_ferry_xid, id)` index is walked and Row Level Security drops what the
/// caller may not read.
extension ChangesPlan {
    /// Whether the page reads through the paths: a page from the start or a
    /// poll, whose cost through them is the caller's (a first page from the
    /// start at 1M terms: bench/scale/README.md, "The changes feed through read
    /// paths"). After a full page (a position cursor)
    /// the walk goes on from the caller's last entry, where their rows are.
    /// A subscription always reads through its paths: a walk would meet
    /// every row the caller may read, public ones included.
    var pagesThroughPaths: Bool { subscription != nil || request.since.position == nil }

    /// `cursor` and `limit` (the page size + 1) are the page statement's parameters.
    func stream(_ resource: Resource, index: Int, cursor: BoundCursor, limit: SQLParameter) -> String {
        let q = resource.qualifiedName
        let idType = resource.column("id")?.type ?? "text"
        let row = RowJSON(resource: resource).view(SQL.column("t"))
        var parts: [String]
        let walk = """
                (SELECT t._ferry_xid AS x, t.id AS id, \(row) AS data FROM \(q) t
                  WHERE \(lower(resource.name, xid: "t._ferry_xid", id: "t.id", idType: idType, cursor: cursor))
                    AND t._ferry_xid < (SELECT upto FROM f)
                  ORDER BY t._ferry_xid, t.id LIMIT \(limit))
            """
        let way = self.way(resource.name)
        if pagesThroughPaths, let paths = readThrough.paths(resource.name), way != .walk {
            parts = paths.enumerated().map { pathIndex, path in
                let column = SQL.id(path.column)
                switch path.keys {
                case .caller:
                    let window = pathWindow(resource, column: "t.\(column)", key: "ferry.current_user_id()", alias: "t", cursor: cursor)
                    return """
                            (SELECT t._ferry_xid AS x, t.id AS id, \(row) AS data FROM \(q) t
                              WHERE \(window)
                              ORDER BY t._ferry_xid, t.id LIMIT \(limit))
                        """
                default:
                    // One index range per key: LATERAL with its own ORDER BY and
                    // LIMIT keeps it a nested loop. Up to the page's bound
                    // (boundDefinition) when there is one, else a page per key.
                    // The bound is on (xid, id) alone (the key is fixed): led by
                    // the column, as the lower one is, PostgreSQL costed the
                    // feed index above any other index on the column and read
                    // each key's rows in full through that one, filtering.
                    let window = pathWindow(resource, column: "m.\(column)", key: "k.key", alias: "m", cursor: cursor)
                    let bound = Self.boundName(index, pathIndex)
                    return """
                            (SELECT t._ferry_xid AS x, t.id AS id, \(row) AS data FROM (\(readThrough.keys(path))) k
                              CROSS JOIN LATERAL (
                                     (SELECT m.* FROM \(q) m
                                       WHERE EXISTS (SELECT 1 FROM \(bound)) AND \(window)
                                         AND (m._ferry_xid, m.id) <= ((SELECT b.x FROM \(bound) b), (SELECT b.id FROM \(bound) b))
                                       ORDER BY m._ferry_xid, m.id LIMIT \(limit))
                                     UNION ALL
                                     (SELECT m.* FROM \(q) m
                                       WHERE NOT EXISTS (SELECT 1 FROM \(bound)) AND \(window)
                                       ORDER BY m._ferry_xid, m.id LIMIT \(limit))) t
                              ORDER BY 1, 2 LIMIT \(limit))
                        """
                }
            }
            // A one-time filter each: only the paths or only the walk run.
            if case .gate(let gate) = way {
                parts =
                    parts.map { "(SELECT p.* FROM \($0) p WHERE NOT \(gate))" }
                    + ["(SELECT w.* FROM \(walk) w WHERE \(gate))"]
            }
        } else {
            parts = [walk]
        }
        for scope in scopes
        where !request.since.isStart && scope.member == resource.name && (subscription == nil || subscription?.root == scope.scope) {
            guard let scopeTable = catalog[scope.scope], let column = resource.column(scope.column) else { continue }
            // LATERAL ... OFFSET 0 keeps this a nested loop driven by the few
            // grants in the window (an index lookup per grant); as a plain join
            // the planner may hash the whole member table. The scope id is cast
            // in its own LATERAL, outside the member table's scan: a cast is not
            // leakproof, so written inside it the qual would have to wait until
            // the table's RLS policy had passed each row, and could never become
            // an index condition (a sequential scan per grant).
            // Only the rows whose own position is not after the cursor: a row changed
            // after it is one the caller reads now, so the part above serves it at its
            // own position; served here too, a shared set's first page carried each of
            // its rows twice. From the start, so, a grant adds nothing (and is not read);
            // nor, on a later page of a download from the start, does a grant older than
            // the download's base (``grantAfterBase(_:scope:)``).
            parts.append(
                """
                    (SELECT g.xid, t.id, \(row) FROM \(grantLog) g
                      CROSS JOIN LATERAL (SELECT CAST(g.scope_id AS \(column.type)) AS key OFFSET 0) k
                      CROSS JOIN LATERAL (SELECT m.* FROM \(q) m
                             WHERE m.\(SQL.id(column.name)) = k.key OFFSET 0) t
                      WHERE \(grantFilter)
                        AND g.scope_table = \(SQL.literal(scopeTable.qualifiedName))::regclass
                        AND \(lower(resource.name, xid: "g.xid", id: "t.id", idType: idType, cursor: cursor))
                        AND NOT (\(lower(resource.name, xid: "t._ferry_xid", id: "t.id", idType: idType, cursor: cursor)))
                        AND \(grantAfterBase(cursor, scope: scope))
                        AND g.xid < (SELECT upto FROM f)
                      ORDER BY g.xid, t.id LIMIT \(limit))
                """)
        }
        // From the start, and below a download's base, a revocation revokes nothing the
        // download holds: it committed before the first page's snapshot, so no page read
        // what it took away, and a row the caller reads again came at its own position
        // (served at the revocation's too, a set unshared and shared again came twice).
        if !request.since.isStart {
            parts.append(
                """
                    (SELECT v.xid, k.key, CASE WHEN t.id IS NULL
                            THEN json_build_object('id', k.key, 'is_deleted', true, 'revoked', true)
                            ELSE \(row) END
                       FROM \(revocationLog) v
                      CROSS JOIN LATERAL (SELECT CAST(v.row_id AS \(idType)) AS key OFFSET 0) k
                       LEFT JOIN LATERAL (SELECT m.* FROM \(q) m WHERE m.id = k.key OFFSET 0) t ON true
                      WHERE \(revocationFilter)v.table_oid = \(SQL.literal(q))::regclass
                        AND \(lower(resource.name, xid: "v.xid", id: "k.key", idType: idType, cursor: cursor))
                        AND v.xid >= \(cursor.base)::xid8 AND v.xid < (SELECT upto FROM f)
                      ORDER BY 1, 2 LIMIT \(limit))
                """)
        }
        return """
              SELECT d.x, \(index) AS ri, \(SQL.literal(resource.name))::text AS r,
                     row_number() OVER (ORDER BY d.x, d.id) AS ord, d.id::text AS id, d.data
                FROM (SELECT DISTINCT ON (u.x, u.id) u.x, u.id, u.data FROM (
            \(parts.joined(separator: "\n    UNION ALL\n"))
                ) u\(rootGate.map { " WHERE \($0)" } ?? "") ORDER BY u.x, u.id) d
            """
    }

    /// A subscription from the start sends its rows only to a caller who reads
    /// its root row (Row Level Security decides, as for any row): a stream the
    /// caller may not read answers as one that does not exist (issue 46). The
    /// rows' own rules do not suffice: a former member still reads their own
    /// member row's tombstone, and it came twice (through two of the page's
    /// parts, each at its own xid). A page deduplicated by id would still send
    /// it once, and so tell of a stream the caller may not read: whether the
    /// stream is theirs is the stream's question, asked here. From a cursor it
    /// still comes, once: the device holds the row and must learn that it is
    /// gone. One index lookup, a one-time filter (an uncorrelated condition):
    /// when false, no part runs.
    var rootGate: String? {
        guard let subscription, request.since.isStart, let root = catalog[subscription.root], let idType = root.column("id")?.type else {
            return nil
        }
        return "EXISTS (SELECT 1 FROM \(root.qualifiedName) r WHERE r.id = (SELECT CAST(\(TransactionSetting.streamKey.current()) AS \(idType))))"
    }

    /// The bounds of the page's multi-key paths, as common table expressions
    /// of the statement (empty when the page walks).
    func boundDefinitions(limit: SQLParameter, cursor: BoundCursor) -> [String] {
        guard pagesThroughPaths else { return [] }
        return request.resources.enumerated().flatMap { index, name -> [String] in
            guard let resource = catalog[name], let paths = readThrough.paths(name), way(name) != .walk else { return [] }
            return paths.enumerated().compactMap { pathIndex, path in
                path.keys == .caller
                    ? nil : boundDefinition(resource, index: index, pathIndex: pathIndex, path: path, limit: limit, cursor: cursor)
            }
        }
    }

    /// A multi-key path's bound: the page's last possible entry. The first
    /// two entries of each key, sorted, cut at the page's size: the entry
    /// there has at least a page of entries at or before it, so every entry
    /// of the page is at or before it, and each key is read up to it only
    /// (about a page in all, where a page per key would read every key's
    /// rows: an owner of 1,000 sets, 100,000 rows). No row when the keys'
    /// first entries are fewer than a page: then each key is read up to a
    /// page, and as most keys hold fewer than two entries, few keys hold more.
    func boundDefinition(
        _ resource: Resource, index: Int, pathIndex: Int, path: ReadThrough.Path, limit: SQLParameter, cursor: BoundCursor
    ) -> String {
        let column = SQL.id(path.column)
        return """
            \(Self.boundName(index, pathIndex)) AS MATERIALIZED (
              SELECT c.x, c.id FROM (\(readThrough.keys(path))) k
               CROSS JOIN LATERAL (SELECT m._ferry_xid AS x, m.id FROM \(resource.qualifiedName) m
                      WHERE \(pathWindow(resource, column: "m.\(column)", key: "k.key", alias: "m", cursor: cursor))
                      ORDER BY m._ferry_xid, m.id LIMIT 2) c
               ORDER BY c.x, c.id OFFSET \(limit) - 1 LIMIT 1)
            """
    }

    /// The bound's name: the resource's place in the request and the path's in its paths.
    static func boundName(_ index: Int, _ pathIndex: Int) -> String { "ferry_bound_\(index)_\(pathIndex)" }

    /// A read path's rows of `resource` after the (frontier) cursor and below
    /// the frontier: `column = key`, and "after the cursor" as one row
    /// comparison led by the column. That is an index condition on `(column,
    /// _ferry_xid, id)` alone, so the planner cannot prefer the `(_ferry_xid,
    /// id)` index on statistics that predate a burst of writes (it then walks
    /// all of them).
    ///
    /// A subscription reads through its paths after a full page too: there
    /// "after the cursor" is the position's (``lower(_:xid:id:idType:cursor:)``).
    func pathWindow(_ resource: Resource, column: String, key: String, alias: String, cursor: BoundCursor) -> String {
        if subscription != nil, request.since.position != nil {
            let after = lower(
                resource.name, xid: "\(alias)._ferry_xid", id: "\(alias).id", idType: resource.column("id")?.type ?? "text", cursor: cursor)
            return "\(column) = \(key) AND \(after) AND \(alias)._ferry_xid < (SELECT upto FROM f)"
        }
        return "\(column) = \(key) AND (\(column), \(alias)._ferry_xid) > (\(key), \(cursor.xid8)) AND \(alias)._ferry_xid < (SELECT upto FROM f)"
    }

    /// The grants a page reads: the caller's; for a subscription, the
    /// caller's and the public ones (its root row becoming public, `public`
    /// true), of its root row only.
    var grantLog: String {
        guard subscription != nil else { return "ferry.access_grants" }
        return """
            (SELECT a.user_id, a.xid, a.scope_table, a.scope_id, false AS public FROM ferry.access_grants a
              WHERE a.user_id = ferry.current_user_id()
             UNION ALL
             SELECT ferry.current_user_id(), p.xid, p.scope_table, p.scope_id, true FROM ferry.public_grants p)
            """
    }

    /// The grants (`g`) that may still bring rows: on the later pages of a download from
    /// the start, not one older than its base (the first page's frontier). Such a grant
    /// committed before the first page's snapshot, so every page saw it and served what
    /// it brought at its own position. Every page of a default-stream download reads as
    /// the caller. A subscription's may not: a page of a public stream is read as no
    /// user (``viewedPublicly()``), which sees no grant of the caller's, and a later page
    /// as the caller. The public view of a public root reads the root and every row that
    /// reads through it (`scope`'s `readThroughScope`), so for those the caller's grants
    /// below the base are left out too (read as members, a private set's rows came twice
    /// in a download of several pages); it never reads a members table's rows ("who
    /// shares a public set is not public"), so for those only the public grants, which
    /// both views see, are. Without `scope` (the activity probe): the members' rule.
    func grantAfterBase(_ cursor: BoundCursor, scope: AccessScope? = nil) -> String {
        let above = "g.xid >= \(cursor.base)::xid8"
        guard subscription != nil else { return above }
        if let scope, scope.readThroughScope || scope.member == scope.scope { return above }
        return "(NOT g.public OR \(above))"
    }

    var revocationFilter: String {
        subscription != nil ? "" : "v.user_id = ferry.current_user_id()\n        AND "
    }

    var grantFilter: String {
        guard subscription != nil else { return "g.user_id = ferry.current_user_id()" }
        return "g.scope_id = \(TransactionSetting.streamKey.current())"
    }

    /// The revocations a page reads: the caller's own; for a subscription,
    /// those of its root row (the caller's, core 0025 records the scope) and
    /// its root row's end of being public. A subscription from the start
    /// reads none (``stream(_:index:cursor:limit:)``): the device holds none of its rows,
    /// and a stream id the caller may not read must answer as one that does
    /// not exist.
    var revocationLog: String {
        guard let subscription else { return "ferry.access_revocations" }
        let root = SQL.literal(catalog[subscription.root]?.qualifiedName ?? "")
        return """
            (SELECT a.xid, a.table_oid, a.row_id FROM ferry.access_revocations a
              WHERE a.user_id = ferry.current_user_id() AND a.scope_table = \(root)::regclass
                AND a.scope_id = \(TransactionSetting.streamKey.current())
             UNION ALL
             SELECT p.xid, p.table_oid, p.row_id FROM ferry.public_revocations p
              WHERE p.scope_table = \(root)::regclass AND p.scope_id = \(TransactionSetting.streamKey.current()))
            """
    }

    /// "After the cursor" for entries of `resource`, as a condition on its
    /// xid and id expressions. At the cursor's own xid, resources before the
    /// cursor's are done, the cursor's resource continues after its id, and
    /// later resources start from their first id.
    func lower(_ resource: String, xid: String, id: String, idType: String, cursor: BoundCursor) -> String {
        guard let position = request.since.position else { return "\(xid) > \(cursor.xid8)" }
        if resource == position.resource {
            return "\(xid) >= \(cursor.xid8) AND (\(xid), \(id)) > (\(cursor.xid8), CAST(\(cursor.id) AS \(idType)))"
        }
        return ChangeOrder.precedes(resource, position.resource) ? "\(xid) > \(cursor.xid8)" : "\(xid) >= \(cursor.xid8)"
    }
}
