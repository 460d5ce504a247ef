import FerryHTTP
import FerryPostgres

extension ResourceActions {
    /// `PATCH /v1/<r>/<id>` (`mode` .patch) and `PUT /v1/<r>/<id>` (.put).
    ///
    /// The precondition is `If-Match` (strict, 412) and/or a body `revision`
    /// (409 when stale; PATCH merges per field instead, see UpdatePlan). With
    /// both, `If-Match` is evaluated first. The path names the row; an `id`
    /// in the body is ignored.
    func update(_ request: HTTPRequest, _ context: RequestContext, mode: WriteMode) throws -> HTTPResponse {
        let (hash, resource, catalog) = try resource(request, context)
        let id = try pathID(context, resource, hash: hash)
        let body = try WriteBody(request, maxItems: 1, allowObject: true, allowArray: false)
        let (revisions, star) = Self.ifMatch(request)
        let prechecked = ObjectMembers(request.body).map {
            FieldPrecheck(resource: resource, mode: mode).passes($0, in: request.body)
        } ?? false
        return try writeOne(resource, catalog, mode: mode, hash: hash, item: body.items, id: id, revisions: revisions,
                            star: star, prechecked: prechecked)
    }

    /// One row's PATCH, PUT or DELETE: the fast path (``FastUpdatePlan``) when
    /// it applies and writes, else UpdatePlan, which finds every other answer.
    /// `item` is the one-item JSON array; `revisions` and `star` come from `ifMatch`;
    /// `prechecked` when its fields passed ``FieldPrecheck``.
    func writeOne(
        _ resource: Resource, _ catalog: SchemaCatalog, mode: WriteMode, hash: String,
        item: String, id: String, revisions: String?, star: String, prechecked: Bool = false
    ) throws -> HTTPResponse {
        let references = catalog.references(for: resource)
        if let fast = fastUpdateSQL(resource, references, mode: mode, prechecked: prechecked),
           let result = try writeIfAny(resource, hash: hash, statement: PostgresStatement(fast, [item, id, revisions, star]),
                                       single: true) {
            return .json(result.singleRow, headers: result.rowHeaders)
        }
        let result = try write(resource, hash: hash, sql: updateSQL(resource, references, mode: mode, itemCount: 1),
                               items: item, params: [id, revisions, star], single: true, itemCount: 1)
        return .json(result.singleRow, headers: result.rowHeaders)
    }

    /// `PATCH /v1/<r>` with an array of objects, each with `id` and `revision`:
    /// one transaction, all or nothing; a failure lists every failing item.
    func bulkPatch(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let (hash, resource, catalog) = try resource(request, context)
        let body = try WriteBody(request, maxItems: maxBulkItems, allowObject: false, allowArray: true)
        let sql = updateSQL(resource, catalog.references(for: resource), mode: .patch, itemCount: body.count)
        let result = try write(resource, hash: hash, sql: sql, items: body.items, params: [nil, nil, "false"],
                               single: false, itemCount: body.count)
        return .json(Array(result.body.utf8))
    }

    /// The update plan for `mode`, for a request of `itemCount` items.
    func updateSQL(_ resource: Resource, _ references: ReferenceCheck, mode: WriteMode, itemCount: Int) -> String {
        let oneItem = itemCount == 1
        return plans.sql(resource, "\(mode.rawValue)|" + references.key + ItemRows.key(oneItem: oneItem)) {
            UpdatePlan(resource: resource, mode: mode, references: references, oneItem: oneItem).sql
        }
    }

    /// The single PATCH, PUT or DELETE fast path (see ``FastUpdatePlan``);
    /// nil when the resource has nothing such a write can change.
    private func fastUpdateSQL(_ resource: Resource, _ references: ReferenceCheck, mode: WriteMode, prechecked: Bool) -> String? {
        // Cached as "" when it does not apply, so the answer is not recomputed per request.
        let sql = plans.sql(resource, mode.rawValue + (prechecked ? "-fast-prechecked|" : "-fast|") + references.key) {
            var plan = FastUpdatePlan(resource: resource, mode: mode, references: references)
            plan.prechecked = prechecked
            return plan.applies ? plan.sql : ""
        }
        return sql.isEmpty ? nil : sql
    }

    /// `$3` and `$4` of an update plan from `If-Match`: the revisions it
    /// lists (NULL without the header), and whether it is `*`.
    static func ifMatch(_ request: HTTPRequest) -> (String?, String) {
        guard let header = request.headers["If-Match"] else { return (nil, "false") }
        guard let revisions = EntityTag.matchRevisions(header) else { return (nil, "true") }
        return (SQL.arrayLiteral(revisions.map { String($0) }), "false")
    }
}
