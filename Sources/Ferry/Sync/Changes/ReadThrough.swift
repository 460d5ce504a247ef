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
///
/// The ids of the rows the caller may read of a parent or shared table are a
/// common table expression of their own (``withClause(for:)``), written once
/// per statement however many paths read through them: planned once, and run
/// at most once.
struct ReadThrough: Sendable {
    /// The keys of one path.
    enum Keys: Sendable, Equatable {
        /// The caller's user id.
        case caller
        /// The caller's live scope ids, from a members rule's generated function.
        case scopeIDs(function: String)
        /// The ids of the rows of a (parent or shared) table that the caller may read.
        case readable(table: String)
        /// The ids of the rows of a shared table that the caller owns (its
        /// owner column is the caller): the rows whose private members the
        /// caller reads.
        case owned(table: String, owner: String)
        /// A subscription's scope row: the id the transaction set
        /// (`ferry.stream_key`, ``ChangesPlan/prelude``), as the table's id type.
        case streamKey(idType: String)
    }

    struct Path: Sendable, Equatable {
        let column: String
        let keys: Keys
    }

    let catalog: SchemaCatalog
    let rules: [String: ReadPath]
    /// ``paths(_:)`` and ``gateParents(_:)`` of every table, worked out once:
    /// a schema load builds one ``ReadThrough`` (``AccessScopeCache``) that
    /// every request's plan asks several times per table.
    private var pathsByTable: [String: [Path]]
    private var gatesByTable: [String: [String]]
    /// The walk decision for every table (``decisionStatement(for:)``), written
    /// once: it does not depend on the request, and a caller's decision is
    /// remembered for all their requests (``WalkDecisions``).
    private(set) var decision: DecisionStatement?

    init(catalog: SchemaCatalog, readPaths: [ReadPath]) {
        self.catalog = catalog
        let rules = Dictionary(readPaths.map { ($0.table, $0) }, uniquingKeysWith: { first, _ in first })
        self.rules = rules
        var paths: [String: [Path]] = [:]
        for table in rules.keys { paths[table] = Self.paths(table, rules: rules, catalog: catalog) }
        pathsByTable = paths
        // An owned table is its own gate; any other, the parents its paths read through.
        gatesByTable = Dictionary(
            uniqueKeysWithValues: paths.map { table, tablePaths in
                (
                    table,
                    rules[table]?.kind == .owned
                        ? [table]
                        : tablePaths.compactMap { path in
                            // A parent's owned ids key a path as its readable ids do
                            // (a teacher's classes, their member rows): a probe each.
                            switch path.keys {
                            case .readable(let parent), .owned(let parent, _): return parent
                            default: return nil
                            }
                        }
                )
            })
        decision = decisionStatement(for: catalog.names)
    }

    /// The read of one subscription to a stream rooted at `root` (core 0025):
    /// the root's row by the stream's key, and every table whose paths read
    /// through it, through those paths only (not the caller's own rows
    /// elsewhere, nor their other scopes). Nothing walks: a walk would read
    /// every row the caller may read, the public ones included. Nil when the
    /// root has no paths (no rule, or a policy of its own beside it).
    func rooted(at root: String) -> (readThrough: ReadThrough, tables: [String])? {
        guard paths(root) != nil, let idType = catalog[root]?.column("id")?.type else { return nil }
        var tables: Set<String> = [root]
        var grew = true
        while grew {
            grew = false
            for (table, tablePaths) in pathsByTable where !tables.contains(table) {
                if tablePaths.contains(where: { if case .readable(let parent) = $0.keys { tables.contains(parent) } else { false } }) {
                    tables.insert(table)
                    grew = true
                }
            }
        }
        var copy = self
        copy.pathsByTable = Dictionary(
            uniqueKeysWithValues: tables.map { table in
                guard table != root else { return (table, [Path(column: "id", keys: .streamKey(idType: idType))]) }
                return (
                    table,
                    (pathsByTable[table] ?? []).filter {
                        if case .readable(let parent) = $0.keys { tables.contains(parent) } else { false }
                    }
                )
            })
        copy.gatesByTable = [:]
        copy.decision = nil
        return (copy, tables.sorted(by: ChangeOrder.precedes))
    }

    /// Rule chains are a few tables deep; a longer one is walked as before.
    static let maximumDepth = 6

    /// The paths to `table`'s readable rows, or nil when the feed must walk all its changes.
    func paths(_ table: String) -> [Path]? { pathsByTable[table] }

    private static func paths(_ table: String, depth: Int = 0, rules: [String: ReadPath], catalog: SchemaCatalog) -> [Path]? {
        func paths(_ table: String, depth: Int) -> [Path]? { Self.paths(table, depth: depth, rules: rules, catalog: catalog) }
        guard depth < Self.maximumDepth, let rule = rules[table], rule.rulesOnly, catalog[table] != nil else { return nil }
        switch rule.kind {
        case .owned:
            var paths = [Path(column: rule.column, keys: .caller)]
            // The ids its members rules share, and those its grant rules (core 0033) grant.
            for sharing in rules.values.sorted(by: { $0.table < $1.table })
            where (sharing.kind == .members || sharing.kind == .grant) && sharing.target == table {
                guard let function = sharing.scopeIDsFunction else { return nil }
                paths.append(Path(column: "id", keys: .scopeIDs(function: function)))
            }
            return paths
        case .child:
            guard let parent = rule.target, paths(parent, depth: depth + 1) != nil else { return nil }
            return [Path(column: rule.column, keys: .readable(table: parent))]
        case .members:
            guard let scope = rule.target, let member = rule.memberColumn, paths(scope, depth: depth + 1) != nil else { return nil }
            // The members of a shared table a grant reaches through (a class's
            // students) are read by its owner and by each row's own member only
            // (core functions/rules.sql, ferry.rules_private_members): a student
            // would find their classmates' rows through the class, for RLS to
            // drop one by one, a class's worth of reads per student.
            if rules.values.contains(where: { $0.kind == .grant && $0.through == scope }), let owned = rules[scope], owned.kind == .owned {
                return [Path(column: member, keys: .caller), Path(column: rule.column, keys: .owned(table: scope, owner: owned.column))]
            }
            return [Path(column: member, keys: .caller), Path(column: rule.column, keys: .readable(table: scope))]
        case .grant:
            // A grant row is read by whoever reads the shared row it points at.
            guard let through = rule.through, let column = rule.memberColumn, paths(through, depth: depth + 1) != nil else {
                return nil
            }
            return [Path(column: column, keys: .readable(table: through))]
        }
    }

    /// The tables whose readable ids the paths of `tables` read, each after
    /// the tables its own ids are read through.
    func readableTables(for tables: [String]) -> [String] {
        var ordered: [String] = []
        func visit(_ table: String) {
            for path in paths(table) ?? [] {
                guard case .readable(let parent) = path.keys, !ordered.contains(parent) else { continue }
                visit(parent)
                ordered.append(parent)
            }
        }
        tables.forEach(visit)
        return ordered
    }

    /// `name AS MATERIALIZED (ids), ...` for every table the paths of `tables`
    /// read through, to open a `WITH` (empty when there is none); with
    /// `walks`, each followed by its walk decision (``walkGate(_:)``).
    func withClause(for tables: [String], walks: Bool) -> String {
        var written = readableTables(for: tables)
        if walks {
            // An owned table is its own gate: its readable ids too, to decide.
            for parent in tables.flatMap(gateParents) where !written.contains(parent) { written.append(parent) }
        }
        return written.flatMap { table -> [String] in
            let readable = "\(Self.name(table)) AS MATERIALIZED (\(readableIDs(table)))"
            guard walks, let resource = catalog[table] else { return [readable] }
            // reltuples is PostgreSQL's estimate of the table's rows (-1 before
            // its first ANALYZE: then the paths).
            let estimate = "(SELECT c.reltuples FROM pg_catalog.pg_class c WHERE c.oid = \(SQL.literal(resource.qualifiedName))::regclass)"
            return [
                readable,
                """
                \(Self.walkName(table)) AS MATERIALIZED (SELECT coalesce(\(estimate) > 0 AND count(*) * 2 >= \(estimate), false) AS walk
                  FROM \(Self.name(table)))
                """,
            ]
        }.joined(separator: ",\n")
    }

    /// Whether `table`'s part of the feed walks its changes instead of reading
    /// through its paths, as a one-row boolean expression, or nil when it
    /// always reads through them (no path of many keys).
    ///
    /// A path keyed by a parent's readable ids costs a probe per key whatever
    /// changed: an owner of 1,000 sets pays 1,000 probes per poll, and two
    /// entries per set for a first page, where the walk, meeting mostly their
    /// rows, reads about what it returns. So when the caller may read at least
    /// half of a parent's rows (by PostgreSQL's estimate of the table), the
    /// table's part walks, as it does after a full page; a caller who reads a
    /// small share of it, where the walk would read mostly other users'
    /// changes, keeps the paths. An owned table walks by the same test on its
    /// own rows: its paths (its owner column, the scope ids of its members
    /// rule) then read what the walk would, through a larger statement and a
    /// call of the scope-ids function.
    func walkGate(_ table: String) -> String? {
        let parents = gateParents(table).map { "(SELECT w.walk FROM \(Self.walkName($0)) w)" }
        return parents.isEmpty ? nil : "(" + parents.joined(separator: " OR ") + ")"
    }

    /// The parents whose readable ids key `table`'s paths, or the owned table
    /// itself: it walks when the caller may read most of any of them.
    func gateParents(_ table: String) -> [String] { gatesByTable[table] ?? [] }

    /// The gate parents of `tables`, each once, in order: what
    /// ``decisionStatement(for:)`` decides (none: nothing to decide).
    func decisionParents(for tables: [String]) -> [String] {
        var parents: [String] = []
        for parent in tables.flatMap(gateParents) where !parents.contains(parent) { parents.append(parent) }
        return parents
    }

    /// The statement that decides, for the caller, which of the parents
    /// gating `tables` they may read most of: one row, a boolean per parent
    /// in ``DecisionStatement/parents``' order. Nil when no table has a gate.
    func decisionStatement(for tables: [String]) -> DecisionStatement? {
        let gated = tables.filter { !gateParents($0).isEmpty }
        let parents = decisionParents(for: gated)
        guard !parents.isEmpty else { return nil }
        let columns = parents.map { "(SELECT w.walk FROM \(Self.walkName($0)) w)" }.joined(separator: ", ")
        return DecisionStatement(
            parents: parents,
            statement: PlannedStatement("WITH \(withClause(for: gated, walks: true))\nSELECT \(columns)"))
    }

    struct DecisionStatement: Sendable {
        let parents: [String]
        let statement: PlannedStatement
    }

    /// The common table expression holding `table`'s readable ids (an
    /// identifier of Ferry's: a resource name is quoted inside it).
    static func name(_ table: String) -> String { SQL.id("ferry_readable_" + table) }

    /// The common table expression holding the walk decision of the tables read through `table`.
    static func walkName(_ table: String) -> String { SQL.id("ferry_walk_" + table) }

    /// A query of one column `key`: the path's keys, each once (a page's
    /// bound counts each key's entries once).
    func keys(_ path: Path) -> String {
        switch path.keys {
        case .caller: "SELECT ferry.current_user_id() AS key"
        case .scopeIDs(let function): "SELECT DISTINCT unnest(\(function)) AS key"
        case .readable(let table): "SELECT key FROM \(Self.name(table))"
        case .owned(let table, let owner):
            "SELECT r.id AS key FROM \(catalog[table]?.qualifiedName ?? SQL.id(table)) r WHERE r.\(SQL.id(owner)) = ferry.current_user_id()"
        case .streamKey(let idType): "SELECT (SELECT CAST(\(TransactionSetting.streamKey.current()) AS \(idType))) AS key"
        }
    }

    /// A query of the ids of `table`'s rows that the caller may read (a
    /// superset the table's policy narrows: it applies to this query too).
    func readableIDs(_ table: String) -> String {
        guard let paths = paths(table), let resource = catalog[table] else { return "SELECT NULL WHERE false" }
        return paths.map { path in
            if path.column == "id", path.keys != .caller { return keys(path) }
            let column = "r.\(SQL.id(path.column))"
            let condition = path.keys == .caller ? "\(column) = ferry.current_user_id()" : "\(column) IN (\(keys(path)))"
            return "SELECT r.id AS key FROM \(resource.qualifiedName) r WHERE \(condition)"
        }.joined(separator: " UNION ")
    }
}
