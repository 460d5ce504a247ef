import FerryHTTP
import FerryPostgres

extension ResourceActions {
    /// `GET /v1/<r>`: filters, modified_since, include_deleted, order, limit,
    /// and paging tokens (``IndexPaging``: page 1 snapshots a result longer than
    /// one page, `?paging_token=&page=` reads it).
    ///
    /// Snapshots hold UUIDs; a resource with another id type cannot be paged, so a
    /// larger result answers its first page with `"complete": false` in `paging`
    /// (and `next: null`), and a client knows it saw only part of the result.
    func index(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let (hash, resource, catalog) = try resource(request, context)
        let query: IndexQuery
        do {
            query = try IndexQuery(request.query, resource: resource, defaultLimit: defaultLimit, maxLimit: maxLimit)
        } catch let problem as Problem {
            try checkToken(hash)
            throw problem
        }
        let plan = IndexPlan(resource: resource, query: query, drives: try scopeDrives(resource, catalog, query))
        if resource.idType == "uuid" { return try pagedIndex(request, hash: hash, plan: plan) }
        if request.queryValue("paging_token") != nil || request.queryValue("page") != nil {
            try checkToken(hash)
            throw PagingProblem.notFound  // no snapshot is ever made for this resource
        }
        let sql = plans.sql(resource, "index|" + query.shape) { plan.sql }
        let result: PostgresResult
        do {
            result = try database.asCaller(tokenHash: hash, [PostgresStatement(sql, query.parameters)])[0]
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            throw IndexQuery.invalid("a filter value does not fit its column's type")
        }
        guard let row = result.first, let data = row[0] else { throw Problem.notFound() }
        let total = Int(row[1] ?? "0") ?? 0
        let pages = max(1, (total + query.limit - 1) / query.limit)
        let etag = "\"i-\(total)-\(row[2] ?? "0")\""
        if ConditionalRead.notModified(request, etag: etag, lastModifiedMs: nil) {
            return ConditionalRead.response(etag: etag, lastModifiedMs: nil)
        }
        var body = Array(#"{"data":"#.utf8)
        body += data.utf8
        body += #","paging":{"token":null,"page":1,"pages":\#(pages),"total":\#(total),"next":null"#.utf8
        if pages > 1 { body += #","complete":false"#.utf8 }
        body += "}}".utf8
        return .json(body, headers: HTTPHeaders([("ETag", etag)]))
    }

    /// Index through paging snapshots.
    private func pagedIndex(_ request: HTTPRequest, hash: String, plan: IndexPlan) throws -> HTTPResponse {
        let answer: IndexPaging.Answer
        do {
            answer = try paging.page(
                request: request, tokenHash: hash, resource: plan.resource.name,
                query: plan.paged, limit: plan.query.limit,
                notModified: { ConditionalRead.notModified(request, etag: $0, lastModifiedMs: nil) })
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            throw IndexQuery.invalid("a filter value does not fit its column's type")
        }
        switch answer {
        case .notModified(let etag): return ConditionalRead.response(etag: etag, lastModifiedMs: nil)
        case .page(let page): return page.response()
        }
    }
}

extension ResourceActions {
    func scopeDrives(_ resource: Resource, _ catalog: SchemaCatalog, _ query: IndexQuery) throws -> [IndexPlan.ScopeDrive] {
        IndexPlan.drives(resource, catalog: catalog, scopes: try scopes.scopes(for: catalog, schema: schemaName, database: database),
                         query: query)
    }
}
