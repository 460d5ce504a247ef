import FerryBase

// Planning: the plan of a resource action (statements with typed binds), its
// typed cache key, the planner, and the cache of SQL text.

/// The statements that answer one ``ResourceAction``: SQL text from the plan
/// cache, typed binds, and what the executor does with the result. Built from
/// the action, the catalog and the access scopes with no I/O
/// (``ResourcePlanner``), so each action's SQL is checked in unit tests
/// (ResourcePlanTests); only ``ResourceExecutor`` runs it.
enum ResourcePlan: Sendable {
    /// One row by id: `(revision, last_modified, is_deleted, json)` or none (``ReadSQL/single``).
    case read(PlannedStatement, ReadConditions)
    /// Multi-show: one row, `(body, fingerprint)` (``ReadSQL/multi``).
    case readMany(PlannedStatement, ReadConditions)
    /// An Index whose result is not paged: one row, `(data, total, fingerprint)` (``IndexSQL``).
    case index(PlannedStatement, limit: Int, ReadConditions)
    /// An Index paged through memcached snapshots (``IndexPaging``).
    case pagedIndex(PagedIndexQuery, resource: String, limit: Int, ReadConditions)
    /// A write whose rows come back as `(status, body, revision, last_modified, id)`.
    /// `single` when the client sent one object; `created` for a POST, whose
    /// single row answers with its status and `Location`.
    case write(PlannedStatement, Resource, single: Bool, created: Bool)
    /// A one-row PATCH, PUT or DELETE: `fast` (``FastUpdateSQL``) when it
    /// applies, whose empty result means "not the common case"; then `exact`
    /// (``UpdateSQL``), which finds every other answer.
    case update(fast: PlannedStatement?, exact: PlannedStatement, Resource)
    /// Nothing to run but the token check, then this answer.
    case refuse(Problem)

    /// The validators the answer is checked against (none for a write).
    var conditions: ReadConditions {
        switch self {
        case .read(_, let conditions), .readMany(_, let conditions), .index(_, _, let conditions),
            .pagedIndex(_, _, _, let conditions):
            return conditions
        case .write, .update, .refuse:
            return ReadConditions()
        }
    }
}

/// What a cached plan is for: the resource and the action's shape, every
/// part that changes the SQL and nothing that only changes a bind.
struct PlanKey: Hashable, Sendable {
    let resource: String
    let shape: Shape

    enum Shape: Hashable, Sendable {
        case read
        case readMany
        /// ``IndexQuery/shape`` (the filtered and ordered columns) and the
        /// scopes read through, which the access scopes decide, not the resource.
        case index(String, drives: [IndexSQL.ScopeDrive])
        /// The same, for the parts of a paged Index (``PagedIndexQuery``).
        case pagedIndex(String, drives: [IndexSQL.ScopeDrive])
        /// ``ReferenceCheck/key``, and whether the statement is the one-item form (``ItemRows``).
        case create(references: String, oneItem: Bool)
        case update(WriteMode, references: String, oneItem: Bool)
        /// `baseBound`: the statement takes the base revision as a bind (``BaseRevision``).
        case fastUpdate(WriteMode, references: String, prechecked: Bool, baseBound: Bool)
    }
}

/// Builds ``ResourcePlan``s. Pure: the catalog and scopes are given, and the
/// plan cache only remembers SQL text.
struct ResourcePlanner: Sendable {
    let catalog: SchemaCatalog
    /// The access scopes an Index may read through (``IndexSQL/ScopeDrive``).
    let scopes: [AccessScope]
    let plans: PlanCache

    func plan(_ action: ResourceAction) -> ResourcePlan {
        // Only a refusal comes without a resource (a name the catalog does not serve).
        guard let resource = action.resource else {
            guard case .refused(let problem) = action.kind else { return .refuse(.notFound()) }
            return .refuse(problem)
        }
        let sql = { (shape: PlanKey.Shape, build: () -> String) in
            plans.sql(resource, shape, build: build)
        }
        switch action.kind {
        case .refused(let problem):
            return .refuse(problem)
        case .read(let id, let conditions):
            let text = sql(.read) { ReadSQL(resource: resource).single }
            return .read(PlannedStatement(sql: text, binds: ReadSQL.Single(id: id, revisions: conditions.revisions).binds), conditions)
        case .readMany(let ids, let parsed, let conditions):
            let text = sql(.readMany) { ReadSQL(resource: resource).multi }
            return .readMany(PlannedStatement(sql: text, binds: ReadSQL.Many(ids: ids, parsed: parsed).binds), conditions)
        case .index(let query, let conditions, let paged):
            let drives = IndexSQL.drives(resource, catalog: catalog, scopes: scopes, query: query)
            let plan = IndexSQL(resource: resource, query: query, drives: drives)
            if paged {
                var parts = plans.paged(resource, .pagedIndex(query.shape, drives: drives)) { plan.paged }
                parts.binds = plan.pagedBinds
                return .pagedIndex(parts, resource: resource.name, limit: query.limit, conditions)
            }
            let text = sql(.index(query.shape, drives: drives)) { plan.sql }
            return .index(PlannedStatement(sql: text, binds: query.binds), limit: query.limit, conditions)
        case .create(let items):
            let references = catalog.references(for: resource)
            let oneItem = items.count == 1
            let text = sql(.create(references: references.key, oneItem: oneItem)) {
                CreateSQL(resource: resource, references: references, oneItem: oneItem).sql
            }
            return .write(write(resource, text, items: items, binds: WriteParameters.create(items:)), resource, single: items.single, created: true)
        case .updateMany(let mode, let items):
            let text = updateSQL(resource, catalog.references(for: resource), mode: mode, oneItem: items.count == 1)
            return .write(
                write(resource, text, items: items) { WriteParameters(items: $0, pathID: nil, revisions: nil, anyRevision: false).binds },
                resource,
                single: false, created: false)
        case .update(let id, let mode, let item, let preconditions, let prechecked, let base):
            let parameters = WriteParameters(items: item, pathID: id, revisions: preconditions.revisions, anyRevision: preconditions.any)
            let binds = parameters.binds
            let references = catalog.references(for: resource)
            let baseBind = base.bind
            // Cached as "" when it does not apply, so the answer is not recomputed per request.
            let fast = sql(.fastUpdate(mode, references: references.key, prechecked: prechecked, baseBound: baseBind != nil)) {
                var plan = FastUpdateSQL(resource: resource, mode: mode, references: references)
                plan.prechecked = prechecked
                plan.baseBound = baseBind != nil
                return plan.applies ? plan.sql : ""
            }
            let exact = updateSQL(resource, references, mode: mode, oneItem: true)
            var fastStatement: PlannedStatement?
            if !fast.isEmpty {
                fastStatement = PlannedStatement(sql: fast, binds: baseBind.map { parameters.binds(base: $0) } ?? binds)
                fastStatement?.rowHints = resource.rowHints
            }
            return .update(
                fast: fastStatement,
                exact: PlannedStatement(sql: exact, binds: binds), resource)
        }
    }

    /// The update plan (``UpdateSQL``) for `mode`.
    private func updateSQL(_ resource: Resource, _ references: ReferenceCheck, mode: WriteMode, oneItem: Bool) -> String {
        plans.sql(resource, .update(mode, references: references.key, oneItem: oneItem)) {
            UpdateSQL(resource: resource, mode: mode, references: references, oneItem: oneItem).sql
        }
    }

    /// A write of `items`: the statement itself for one item; for several,
    /// through `ferry.write_items`, which on a constraint error finds every
    /// failing item (migrations/0003).
    private func write(_ resource: Resource, _ sql: String, items: WriteItems, binds: (String) -> [Bind]) -> PlannedStatement {
        guard items.count > 1 else { return PlannedStatement(sql: sql, binds: binds(items.items)) }
        return PlannedStatement(
            "SELECT * FROM ferry.write_items(\(bind: resource.qualifiedName)::regclass, \(bind: sql)::text, \(bind: .json(items.items))::jsonb)"
                as SQLQuery)
    }
}

/// SQL text per resource and action shape, built once from the schema.
///
/// Each entry remembers the `Resource` it was planned from, so a reloaded
/// catalog (a changed table) simply misses and replans. Bounded: when full it
/// starts over, which only costs replanning. Every request reads it and
/// almost none write it.
final class PlanCache: Sendable {
    /// A statement's text, or the text parts paging wraps in its own statements.
    private enum Text: Sendable {
        case sql(String)
        case paged(PagedIndexQuery)
    }
    private struct Entry: Sendable { let resource: Resource; let text: Text }
    private let entries = Locked<[PlanKey: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// The cached SQL for `shape` on `resource`, or `build()`'s, stored.
    func sql(_ resource: Resource, _ shape: PlanKey.Shape, build: () -> String) -> String {
        if case .sql(let sql)? = hit(resource, shape) { return sql }
        let sql = build()
        store(resource, shape, .sql(sql))
        return sql
    }

    /// The cached parts of a paged Index for `shape` on `resource`, or
    /// `build()`'s, stored without their binds (the caller sets them).
    func paged(_ resource: Resource, _ shape: PlanKey.Shape, build: () -> PagedIndexQuery) -> PagedIndexQuery {
        if case .paged(let parts)? = hit(resource, shape) { return parts }
        var parts = build()
        parts.binds = []
        store(resource, shape, .paged(parts))
        return parts
    }

    private func hit(_ resource: Resource, _ shape: PlanKey.Shape) -> Text? {
        let key = PlanKey(resource: resource.name, shape: shape)
        guard let hit = entries.withLock({ $0[key] }), hit.resource == resource else { return nil }
        return hit.text
    }

    private func store(_ resource: Resource, _ shape: PlanKey.Shape, _ text: Text) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[PlanKey(resource: resource.name, shape: shape)] = Entry(resource: resource, text: text)
        }
    }

    /// How many plans are stored (for tests).
    var count: Int { entries.withLock { $0.count } }
}
