import FerryHTTP

extension ResourceActions {
    /// `POST /v1/<r>`: one object or an array (multi-create, all or nothing).
    ///
    /// Retries are safe: an existing id whose stored fields equal every field
    /// sent answers 200 with the stored row; otherwise 409 `already_exists`
    /// with `current`. An id taken by a row the caller cannot see answers 409
    /// `already_exists` without `current`: that says no more than a random
    /// UUID collision would, and reveals nothing of the row.
    func create(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let (hash, resource, catalog) = try resource(request, context)
        let body = try WriteBody(request, maxItems: maxBulkItems, allowObject: true, allowArray: true)
        let references = catalog.references(for: resource)
        let oneItem = body.count == 1
        let sql = plans.sql(resource, "create|" + references.key + ItemRows.key(oneItem: oneItem)) {
            CreatePlan(resource: resource, references: references, oneItem: oneItem).sql
        }
        let result = try write(resource, hash: hash, sql: sql, items: body.items, params: [], single: body.single, itemCount: body.count)
        guard body.single else { return .json(Array(result.body.utf8), status: result.status) }
        var headers = result.rowHeaders
        if let id = result.id { headers.add("Location", "/v1/\(resource.name)/\(id)") }
        return .json(result.singleRow, status: result.status, headers: headers)
    }
}
