import FerryHTTP

// What a resource request asks for, parsed without I/O: the action itself,
// the write body's items, and which write it is. Its validators
// (`If-None-Match`, `If-Modified-Since`, `If-Match`, entity tags) have files
// of their own here, since Execution and Response read them too.

/// What a request to `/v1/<r>` or `/v1/<r>/<id>` asks for, decided from the
/// request and the catalog alone: no database, no cache, no clock.
///
/// It is the first value of the pipeline (`ResourceAction` → ``ResourcePlan``
/// → ``ResourceExecutor``), so every answer that parsing alone decides is
/// decided here and tested without I/O (ResourceActionTests). Two kinds of
/// refusal come out of it, in the contract's order:
/// - thrown: the answer needs no database (no token is 401; a body that is
///   not JSON, not the right shape or too long is 415/400/422; a reserved name
///   is 404);
/// - ``Kind/refused(_:)``: the answer is a 4xx about the path or the query,
///   given only after the token is checked, so that a bad token is 401 whatever
///   else is wrong (an unknown resource, an id that cannot name a row).
struct ResourceAction: Sendable {
    /// Which of the eight resource routes the request came in on.
    enum Route: Sendable, Equatable {
        case index, create, bulkPatch, bulkDelete
        case read, put, patch, delete
    }

    /// The resource named in the path; nil only for ``Kind/refused(_:)`` of a name with no resource.
    let resource: Resource?
    /// The request's bearer, not yet checked: who the caller claims to be.
    let credential: Credential
    let kind: Kind

    /// The row a PUT, PATCH or DELETE names by its path; nil for the other actions.
    var pathID: String? {
        if case .update(let id, _, _, _, _, _) = kind { return id }
        return nil
    }

    enum Kind: Sendable {
        /// `GET /v1/<r>/<id>`.
        case read(id: String, conditions: ReadConditions)
        /// `GET /v1/<r>/<id>,<id>,...`: the ids deduplicated in request order,
        /// each paired with itself when it can be an id of the resource, else nil
        /// (it names no row and is reported missing).
        case readMany(ids: [String], parsed: [String?], conditions: ReadConditions)
        /// `GET /v1/<r>`. `paged` when the resource's ids can be snapshotted
        /// (UUIDs), so a longer result is paged through memcached; paging then
        /// reads its token and page from the request itself.
        case index(IndexQuery, conditions: ReadConditions, paged: Bool)
        /// `POST /v1/<r>`.
        case create(WriteItems)
        /// `PATCH`/`PUT`/`DELETE /v1/<r>/<id>`. `item` is the one-item array
        /// (`[{}]` or `[{"revision": n}]` for a DELETE); `prechecked` when the
        /// body's fields passed ``FieldPrecheck``, so the fast path may skip validation;
        /// `base` the item's revision when read here (``BaseRevision``).
        case update(id: String, mode: WriteMode, item: String, preconditions: WritePreconditions, prechecked: Bool, base: BaseRevision)
        /// `PATCH`/`DELETE /v1/<r>` with an array of items, all or nothing.
        case updateMany(mode: WriteMode, items: WriteItems)
        /// Answered with this problem once the token is checked.
        case refused(Problem)
    }

    /// Whether the action reads public rows (core 0025): a GET does, and so does an
    /// Index unless `public=false` asks for the caller's own rows only; a write
    /// never passes a policy through one.
    var readsPublic: Bool {
        switch kind {
        case .read, .readMany: true
        case .index(let query, _, _): query.includePublic
        case .create, .update, .updateMany, .refused: false
        }
    }

    /// The limits a request is parsed against (`limits.max_bulk_items`, `paging.*`).
    struct Limits: Sendable {
        var maxBulkItems: Int
        var defaultLimit: Int
        var maxLimit: Int
    }

    /// The action `request` asks for on `route`, with the path's parameters.
    static func parse(
        _ request: HTTPRequest, route: Route, parameters: RouteParameters, catalog: SchemaCatalog, limits: Limits
    ) throws -> ResourceAction {
        let name = parameters["resource"] ?? ""
        if SchemaCatalog.reservedNames.contains(name) { throw Problem.notFound("no route for /v1/\(name)") }
        let hash = try Caller.credential(request)
        guard let resource = catalog[name] else {
            return ResourceAction(resource: nil, credential: hash, kind: .refused(.notFound("no resource called \(name)")))
        }
        let action = { (kind: Kind) in ResourceAction(resource: resource, credential: hash, kind: kind) }
        let pathID = parameters["id"] ?? ""
        // A malformed id names no row: 404, as a well-formed id of no row would be.
        let idRefusal = { action(.refused(.notFound("no such row"))) }
        switch route {
        case .read:
            let conditions = ReadConditions(request)
            if pathID.utf8.contains(UInt8(ascii: ",")) {
                var seen = Set<String>()
                let ids = pathID.split(separator: ",").map(String.init).filter { seen.insert($0).inserted }
                guard ids.count <= limits.maxLimit else {
                    throw Problem(422, .tooManyItems, "multi-show takes at most \(limits.maxLimit) ids")
                }
                let kind = resource.idKind
                return action(.readMany(ids: ids, parsed: ids.map { kind.accepts(id: $0) ? $0 : nil }, conditions: conditions))
            }
            guard resource.idKind.accepts(id: pathID) else { return idRefusal() }
            return action(.read(id: pathID, conditions: conditions))
        case .index:
            let query: IndexQuery
            do {
                query = try IndexQuery(request.query, resource: resource, defaultLimit: limits.defaultLimit, maxLimit: limits.maxLimit)
            } catch let problem as Problem {
                return action(.refused(problem))
            }
            let paged = resource.idType == "uuid"
            if !paged, request.queryValue("paging_token") != nil || request.queryValue("page") != nil {
                return action(.refused(PagingProblem.notFound))  // no snapshot is ever made for this resource
            }
            return action(.index(query, conditions: ReadConditions(request), paged: paged))
        case .create:
            return action(.create(try WriteItems(request, maxItems: limits.maxBulkItems, allowObject: true, allowArray: true)))
        case .bulkDelete where !resource.deletable:
            return action(.refused(.undeletable(resource, allow: "GET, HEAD, POST, PATCH")))
        case .delete where !resource.deletable:
            return action(.refused(.undeletable(resource, allow: "GET, HEAD, PATCH, PUT")))
        case .bulkPatch, .bulkDelete:
            let items = try WriteItems(request, maxItems: limits.maxBulkItems, allowObject: false, allowArray: true)
            return action(.updateMany(mode: route == .bulkPatch ? .patch : .delete, items: items))
        case .put, .patch:
            guard resource.idKind.accepts(id: pathID) else { return idRefusal() }
            let mode: WriteMode = route == .put ? .put : .patch
            let body = try WriteItems(request, maxItems: 1, allowObject: true, allowArray: false)
            let members = ObjectMembers(request.body)
            let idType = resource.idColumn?.valueType ?? resource.idType
            let idDiffers =
                members.map { BodyID.differs($0, in: request.body, pathID: pathID, kind: resource.idKind, type: idType) }
                ?? BodyID.differs(decoding: request.body, pathID: pathID, kind: resource.idKind, type: idType)
            if idDiffers { return action(.refused(BodyID.mismatch(pathID: pathID))) }
            let prechecked = members.map { FieldPrecheck(resource: resource, mode: mode).passes($0, in: request.body) } ?? false
            let base = prechecked ? members.map { BaseRevision($0, in: request.body) } ?? .unread : .unread
            return action(
                .update(
                    id: pathID, mode: mode, item: body.items, preconditions: WritePreconditions(request),
                    prechecked: prechecked, base: base))
        case .delete:
            guard resource.idKind.accepts(id: pathID) else { return idRefusal() }
            var item = "[{}]"
            var base = BaseRevision.absent
            if let revision = request.queryValue("revision") {
                guard request.query.lazy.filter({ $0.name == "revision" }).count == 1 else {
                    return action(.refused(.badRequest("revision is given more than once")))
                }
                guard let revision = Revision(parsing: revision) else {
                    return action(.refused(.badRequest("revision must be a non-negative integer")))
                }
                // The write statements read a base revision from the item, as for a PATCH body's.
                item = #"[{"revision":\#(revision)}]"#
                base = .given(revision)
            }
            return action(
                .update(
                    id: pathID, mode: .delete, item: item, preconditions: WritePreconditions(request),
                    prechecked: false, base: base))
        }
    }
}

extension Problem {
    /// 405 for a DELETE on a resource whose `is_deleted` the serve role may not update:
    /// a delete is `UPDATE … SET is_deleted = true`, so it could only fail, and the
    /// answer names the grant that is missing instead of a column the row has.
    static func undeletable(_ resource: Resource, allow: String) -> Problem {
        Problem(
            405, .methodNotAllowed,
            "\(resource.name) rows cannot be deleted: the server's database role may not update is_deleted "
                + "(GRANT UPDATE (is_deleted) ON \(resource.schema).\(resource.name), or a sync rule, allows it)",
            headers: HTTPHeaders([("Allow", allow)]))
    }
}

/// A write body, checked just enough to plan it: JSON content type, the
/// structure scan, the item count limit. PostgreSQL does the parsing.
struct WriteItems: Sendable, Equatable {
    /// The JSON array of items handed to the statement (``WriteParameters/items``).
    let items: String
    /// How many items; 1 for a single object.
    let count: Int
    /// Whether the client sent one object (not an array).
    let single: Bool

    /// - Parameters:
    ///   - allowObject: a single object is accepted (wrapped as a one-item array).
    ///   - allowArray: an array of objects is accepted.
    init(_ request: HTTPRequest, maxItems: Int, allowObject: Bool, allowArray: Bool) throws {
        try RequestBody.requireJSON(request)
        let scan = try BodyScan(request.body)
        switch scan.top {
        case .object:
            guard allowObject else { throw Problem(400, .badRequest, "this request takes a JSON array of objects") }
            // Wrapped as it is copied out of the body: one copy, not a String and then a second for the brackets.
            let body = request.body
            items = String(unsafeUninitializedCapacity: body.count + 2) { out in
                out[0] = UInt8(ascii: "[")
                _ = out[1...].initialize(fromContentsOf: body)
                out[body.count + 1] = UInt8(ascii: "]")
                return body.count + 2
            }
            count = 1
            single = true
        case .array:
            guard allowArray else { throw Problem(400, .badRequest, "this request takes one JSON object") }
            guard scan.count <= maxItems else {
                throw Problem(422, .tooManyItems, "at most \(maxItems) items per request; this one has \(scan.count)")
            }
            items = String(decoding: request.body, as: UTF8.self)
            count = scan.count
            single = false
        }
    }
}

// `package` for ferry-fuzz, which runs FieldPrecheck in PATCH and PUT mode.
/// Which write a plan performs; decides the field rules.
package enum WriteMode: String, Sendable {
    /// POST: insertable fields, defaults for the rest, create-retry rule.
    case create
    /// PATCH: the fields sent; per-field merge on a stale body revision.
    case patch
    /// PUT: every updatable field; left-out ones reset to their default; strict revision.
    case put
    /// DELETE: soft delete, tombstones.
    case delete
}
