/// Where the feed finds the rows of a table that the caller may read, from
/// the tables' read paths (``ReadPath``): for each path, a column and the keys
/// the caller holds for it. A table's part of the feed walks the index on
/// `(column, _ferry_xid, id)` (core 0021) once per key, so a poll costs what
/// the caller may see, not what everyone wrote since the cursor.
///
/// The paths cover a rule's read policy exactly (migration 0019 writes it from
/// the same rule), and Row Level Security still filters every row they reach:
/// they only choose where to look. A table without a rule, with a permissive
/// read policy beside the rule's, or below such a table, has no paths and is
/// walked in `_ferry_xid` order as before.
struct ReadThrough: Sendable {
    /// The keys of one path.
    enum Keys: Sendable, Equatable {
        /// The caller's user id.
        case caller
        /// A query of one column: the ids of the rows (of the parent or the
        /// shared table) that the caller may read.
        case query(String)
    }

    struct Path: Sendable, Equatable {
        let column: String
        let keys: Keys
    }

    let catalog: SchemaCatalog
    let rules: [String: ReadPath]

    init(catalog: SchemaCatalog, readPaths: [ReadPath]) {
        self.catalog = catalog
        rules = Dictionary(readPaths.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Rule chains are a few tables deep; a longer one is walked as before.
    static let maximumDepth = 6

    /// The paths to `table`'s readable rows, or nil when the feed must walk all its changes.
    func paths(_ table: String, depth: Int = 0) -> [Path]? {
        guard depth < Self.maximumDepth, let rule = rules[table], rule.rulesOnly, catalog[table] != nil else { return nil }
        switch rule.kind {
        case .owned:
            var paths = [Path(column: rule.column, keys: .caller)]
            for sharing in rules.values.sorted(by: { $0.table < $1.table }) where sharing.kind == .members && sharing.target == table {
                guard let function = sharing.scopeIDsFunction else { return nil }
                paths.append(Path(column: "id", keys: .query("SELECT unnest(\(function))")))
            }
            return paths
        case .child:
            guard let parent = rule.target, let ids = readableIDs(parent, depth: depth + 1) else { return nil }
            return [Path(column: rule.column, keys: .query(ids))]
        case .members:
            guard let scope = rule.target, let member = rule.memberColumn,
                  let ids = readableIDs(scope, depth: depth + 1) else { return nil }
            return [Path(column: member, keys: .caller), Path(column: rule.column, keys: .query(ids))]
        }
    }

    /// A query of the ids of `table`'s rows that the caller may read (a superset
    /// the table's policy narrows: it applies to this query too).
    func readableIDs(_ table: String, depth: Int) -> String? {
        guard let paths = paths(table, depth: depth), let resource = catalog[table] else { return nil }
        let alias = "r\(depth)"
        return paths.map { path in
            switch path.keys {
            case .query(let ids) where path.column == "id":
                return ids
            case .query(let ids):
                return "SELECT \(alias).id FROM \(resource.qualifiedName) \(alias) WHERE \(alias).\(SQL.id(path.column)) IN (\(ids))"
            case .caller:
                return "SELECT \(alias).id FROM \(resource.qualifiedName) \(alias) WHERE \(alias).\(SQL.id(path.column)) = ferry.current_user_id()"
            }
        }.joined(separator: " UNION ")
    }
}
