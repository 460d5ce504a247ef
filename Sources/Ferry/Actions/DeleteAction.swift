import FerryHTTP

extension ResourceActions {
    /// `DELETE /v1/<r>/<id>`: a soft delete, with `If-Match` (412) or
    /// `?revision=N` (409). A row already deleted answers 200 with its
    /// tombstone whatever revision was sent.
    func delete(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let (hash, resource, catalog) = try resource(request, context)
        let id = try pathID(context, resource, hash: hash)
        var item = "[{}]"
        if let revision = request.queryValue("revision") {
            guard let n = Int64(revision), n >= 0 else {
                try checkToken(hash)
                throw Problem.badRequest("revision must be a non-negative integer")
            }
            item = #"[{"revision":\#(n)}]"#
        }
        let (revisions, star) = Self.ifMatch(request)
        return try writeOne(resource, catalog, mode: .delete, hash: hash, item: item, id: id, revisions: revisions, star: star)
    }

    /// `DELETE /v1/<r>` with `[{"id", "revision"}, ...]`: all or nothing,
    /// 200 with the tombstones.
    func bulkDelete(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let (hash, resource, catalog) = try resource(request, context)
        let body = try WriteBody(request, maxItems: maxBulkItems, allowObject: false, allowArray: true)
        let sql = updateSQL(resource, catalog.references(for: resource), mode: .delete, itemCount: body.count)
        let result = try write(resource, hash: hash, sql: sql, items: body.items,
                               params: [nil, nil, "false"], single: false, itemCount: body.count)
        return .json(Array(result.body.utf8))
    }
}
