import FerryPostgres

/// What a default-stream page reads beside its entries so that the waiters
/// of other users may take it (``DefaultChecks``, issue 46 "One query per
/// change"): the ids and rule columns of every row changed in the page's
/// window, read past Row Level Security (`ferry.window_keys`), and the users
/// with access grants or revocations since the cursor
/// (`ferry.access_changed_users`, core 0030). Read in the page's own
/// statement, so in its snapshot: exactly the rows the page chose from.
extension ChangesPlan {
    /// Most rows a window read gives per table; more means too many to tell,
    /// and the page is shared with nobody.
    static let windowRowLimit = 1_000

    /// One table of the window read: its paths say who may read each of its rows.
    struct WindowTable: Sendable {
        let name: String
        let qualifiedName: String
        let paths: [ReadThrough.Path]
        /// The paths' columns but `id`, in the order the read gives their values.
        let columns: [String]
        /// A scope table (``scopeTables``): the registry holds which of its rows each waiting user reads.
        let isScope: Bool
    }

    /// The tables a default-stream page's window read covers: the request's
    /// resources and every scope table (whose rows decide who reads the
    /// others), each with its paths. Nil when the page is never shared: not
    /// the default stream, not a frontier cursor, or a table without paths
    /// (its readers are the policy's to tell, not the rules').
    var windowTables: [WindowTable]? {
        guard subscription == nil, !publicView, request.since.position == nil, !request.since.isStart else { return nil }
        let scopeNames = Set(scopeTables.map(\.name))
        var names = request.resources
        for name in scopeNames.sorted() where !names.contains(name) { names.append(name) }
        var tables: [WindowTable] = []
        for name in names {
            guard let resource = catalog[name], let paths = readThrough.paths(name) else { return nil }
            var columns: [String] = []
            for path in paths where path.column != "id" && !columns.contains(path.column) { columns.append(path.column) }
            tables.append(
                WindowTable(
                    name: name, qualifiedName: resource.qualifiedName, paths: paths, columns: columns,
                    isScope: scopeNames.contains(name)))
        }
        return tables
    }

    /// The window read's columns for the page statement (whose `f` holds the
    /// frontier): `window_<i>` per ``windowTables`` entry (and
    /// `window_<i>_all` for a scope table: its writes above the frontier
    /// too), then `window_users`. `xid8` is the cursor's xid, `limit` the parameter of
    /// ``windowRowLimit``.
    func windowColumns(_ tables: [WindowTable], xid8: String, limit: SQLParameter) -> [String] {
        tables.enumerated().flatMap { index, table in
            let columns = table.columns.map { SQL.literal($0) }.joined(separator: ", ")
            func read(upto: String, as name: String) -> String {
                "ferry.window_keys(\(SQL.literal(table.qualifiedName))::regclass, ARRAY[\(columns)]::name[], \(xid8), \(upto), \(limit)) AS \(name)"
            }
            // A scope row's every visible write since the cursor, up to the frontier or past it: one
            // that committed above the frontier already decides, in this snapshot, who reads the page's rows.
            return [read(upto: "f.upto", as: "window_\(index)")]
                + (table.isScope ? [read(upto: "'18446744073709551615'::xid8", as: "window_\(index)_all")] : [])
        } + ["ferry.access_changed_users(\(xid8), \(limit))::text AS window_users"]
    }
}
