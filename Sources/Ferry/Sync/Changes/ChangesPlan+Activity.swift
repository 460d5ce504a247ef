import FerryPostgres

/// The cheap first step of every poll: "is there anything at all after the
/// cursor and below the frontier?", one index probe per stream (per key of a
/// read path, ``ReadThrough``) and no row rendering. Most polls end here (an empty page or a 304), and this
/// statement plans in a fraction of the time of the full page statement.
///
/// It runs under the caller's RLS, so it answers for the caller's rows only;
/// either way the answer the client gets is the same as the full statement
/// would give (an empty page at the frontier), so it reveals nothing more.
extension ChangesPlan {
    /// Columns: frontier, id_check, expired, found, held. Parameters: the
    /// cursor (``ChangeCursor/bind(into:)``), as in the page statement.
    var activityStatement: PlannedStatement { activityStatement(waiting: false) }

    /// The activity check, read by ``FeedActivity``. With `waiting`, its
    /// column `held` says whether the caller can see changes at or above the
    /// frontier, which an older transaction still running holds back (a
    /// waiter checks again once the frontier has passed them,
    /// docs/changes-feed.md "Live"); without, it is false.
    func activityStatement(waiting: Bool) -> PlannedStatement {
        let (binds, cursor) = cursorBinds()
        return binds.statement(activitySQL(waiting: waiting, cursor: cursor))
    }

    /// The activity check's text, `cursor` its parameters.
    func activitySQL(waiting: Bool, cursor: BoundCursor) -> String {
        // At a frontier cursor every entry at its xid is delivered; at a
        // position some may remain at the same xid.
        let after = request.since.position == nil ? ">" : ">="
        let resources = request.resources.compactMap { catalog[$0] }
        var probes = resources.flatMap { resource -> [String] in
            let q = resource.qualifiedName
            let way = self.way(resource.name)
            guard let paths = readThrough.paths(resource.name), way != .walk else {
                return ["EXISTS (SELECT 1 FROM \(q) t WHERE t._ferry_xid \(after) \(cursor.xid8) AND t._ferry_xid < s.frontier)"]
            }
            // As in the page statement (pathWindow), "after the cursor" is a row
            // comparison led by the path's column, which no other index can use,
            // and the order by _ferry_xid is the path index's own once the column
            // is fixed: together they keep the probe on (column, _ferry_xid, id)
            // instead of a walk of the _ferry_xid index or of all the key's rows.
            let pathProbes = paths.map { path in
                let column = SQL.id(path.column)
                return "EXISTS (SELECT 1 FROM (\(readThrough.keys(path))) k CROSS JOIN LATERAL (SELECT 1 FROM \(q) m "
                    + "WHERE m.\(column) = k.key AND (m.\(column), m._ferry_xid) \(after) (k.key, \(cursor.xid8)) "
                    + "AND m._ferry_xid < s.frontier ORDER BY m._ferry_xid LIMIT 1) t)"
            }
            guard case .gate(let gate) = way else { return pathProbes }
            // CASE evaluates only the branch taken.
            return [
                "CASE WHEN \(gate) THEN EXISTS (SELECT 1 FROM \(q) t WHERE t._ferry_xid \(after) \(cursor.xid8) "
                    + "AND t._ferry_xid < s.frontier) ELSE (\(pathProbes.joined(separator: " OR "))) END"
            ]
        }
        var heldProbes = resources.map { resource in
            "EXISTS (SELECT 1 FROM \(resource.qualifiedName) t WHERE t._ferry_xid >= s.frontier)"
        }
        if subscription != nil {
            // A subscription's logs (``grantLog``, ``revocationLog``): its root row's.
            // A grant below a download's base brings no rows (``grantAfterBase(_:scope:)``): no activity.
            // From the start a page reads neither log: nor does its probe.
            var logs: [String] = []
            if !request.since.isStart {
                logs.append(grantLog + " g WHERE " + grantFilter + " AND " + grantAfterBase(cursor))
                logs.append(revocationLog + " g WHERE g.xid >= \(cursor.base)::xid8")
            }
            for log in logs {
                probes.append("EXISTS (SELECT 1 FROM \(log) AND g.xid \(after) \(cursor.xid8) AND g.xid < s.frontier)")
                heldProbes.append("EXISTS (SELECT 1 FROM \(log) AND g.xid >= s.frontier)")
            }
        } else {
            // From the start a page reads neither log (``stream(_:index:cursor:limit:)``): nor does its probe.
            for log in request.since.isStart ? [] : ["ferry.access_grants", "ferry.access_revocations"] {
                let base = " AND " + (log == "ferry.access_grants" ? grantAfterBase(cursor) : "g.xid >= \(cursor.base)::xid8")
                probes.append(
                    "EXISTS (SELECT 1 FROM \(log) g WHERE g.user_id = ferry.current_user_id() "
                        + "AND g.xid \(after) \(cursor.xid8) AND g.xid < s.frontier\(base))")
                heldProbes.append("EXISTS (SELECT 1 FROM \(log) g WHERE g.user_id = ferry.current_user_id() AND g.xid >= s.frontier)")
            }
        }
        // A position's id must fit its resource's id type (else 22P02: 400),
        // whether or not anything follows it. Unchecked (as text) when its
        // resource is not served, NULL at a frontier.
        var idCheck = "\(cursor.id)::text"
        if let position = request.since.position, let resource = catalog[position.resource] {
            idCheck = "CAST(\(cursor.id) AS \(resource.column("id")?.type ?? "text"))::text"
        }
        // Either may hold none: a subscription from the start that names only resources
        // outside its stream reads no table and no access log.
        let held = waiting && !heldProbes.isEmpty ? heldProbes.joined(separator: "\n    OR ") : "false"
        let found = probes.isEmpty ? "false" : probes.joined(separator: "\n   OR ")
        let readable = readThrough.withClause(for: readThroughResources(resources.map(\.name)), walks: walks == .decidedInStatement)
        return (readable.isEmpty ? "" : "WITH \(readable)\n") + """
            SELECT s.frontier::text AS frontier, \(idCheck) AS id_check,
                   \(cursor.expired(horizon: "h.horizon_xid")) AS expired,
                   \(cursor.ahead) AS ahead,
                   \(found) AS found,
                   \(held) AS held
              FROM (SELECT ferry.feed_frontier() AS frontier OFFSET 0) s CROSS JOIN ferry.purge_horizon h
            """
    }

    /// The scope tables among the resources: a waiter's caller is woken by
    /// changes under the rows of these they can read.
    var scopeTables: [Resource] {
        Set(scopes.map(\.scope)).sorted().compactMap { catalog[$0] }
    }

    /// Runs `body`, turning a cursor whose id does not fit its resource's id
    /// type (SQLSTATE class 22) into the 400 a malformed cursor gets.
    static func mappingCursorErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            throw ChangesRequest.invalid("since is not a cursor this server gave out; start over without since")
        }
    }
}
