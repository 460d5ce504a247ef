import FerryHTTP
import FerryPostgres

/// What every resource action needs: the database, the live schema, the
/// plan cache and the limits. The actions themselves live in one file each
/// (`ReadAction.swift`, `IndexAction.swift`, `CreateAction.swift`,
/// `UpdateAction.swift`, `DeleteAction.swift`).
struct ResourceActions: Sendable {
    let database: Database
    let schema: SchemaCache
    let plans: PlanCache
    let maxBulkItems: Int
    let defaultLimit: Int
    let maxLimit: Int
    let paging: IndexPaging
    /// The schema's name, for its access scopes.
    let schemaName: String
    let scopes = AccessScopeCache()

    /// The resource named in the path, and the catalog it came from; 404 when
    /// there is none (after checking the token, so a bad token is still 401).
    /// Ferry's own names (`users` when sign-up is off, ...) answer a plain 404
    /// like any path without a route.
    func resource(_ request: HTTPRequest, _ context: RequestContext) throws -> (String, Resource, SchemaCatalog) {
        if let name = context.parameters["resource"], SchemaCatalog.reservedNames.contains(name) {
            throw Problem.notFound("no route for /v1/\(name)")
        }
        let hash = try Caller.tokenHash(request)
        let catalog = schema.catalog
        guard let name = context.parameters["resource"], let resource = catalog[name] else {
            try checkToken(hash)
            throw Problem.notFound("no resource called \(context.parameters["resource"] ?? "")")
        }
        return (hash, resource, catalog)
    }

    /// The path id, or 404 when it cannot be an id of this resource (a
    /// malformed id names no row; the token is still checked first).
    func pathID(_ context: RequestContext, _ resource: Resource, hash: String) throws -> String {
        let id = context.parameters["id"] ?? ""
        guard resource.idKind.accepts(id: id) else {
            try checkToken(hash)
            throw Problem.notFound("no such row")
        }
        return id
    }

    /// Runs only the token check (answers 401 for a bad token).
    func checkToken(_ hash: String) throws {
        _ = try database.asCaller(tokenHash: hash, [])
    }

    /// Runs one planned write: directly for a single item, through
    /// `ferry.write_items` for several (which, on a constraint error, finds
    /// every failing item). Database errors become contract answers.
    func write(
        _ resource: Resource, hash: String, sql: String, items: String, params: [String?], single: Bool, itemCount: Int
    ) throws -> WriteResult {
        let bulk = itemCount > 1
        let statement = bulk
            ? PostgresStatement("SELECT * FROM ferry.write_items($1::regclass, $2::text, $3::jsonb)",
                                [resource.qualifiedName, sql, items])
            : PostgresStatement(sql, [items] + params)
        guard let result = try writeIfAny(resource, hash: hash, statement: statement, single: single) else {
            throw Problem(500, "internal_error", "the write returned nothing")
        }
        return result
    }

    /// Runs one write statement; nil when it returned no row (a fast path that
    /// did not apply). Database errors become contract answers.
    func writeIfAny(_ resource: Resource, hash: String, statement: PostgresStatement, single: Bool) throws -> WriteResult? {
        let result: PostgresResult
        do {
            result = try database.asCaller(tokenHash: hash, [statement])[0]
        } catch {
            throw WriteFailure.map(error, resource: resource, single: single)
        }
        guard let row = result.first else { return nil }
        return WriteResult(
            status: Int(row[0] ?? "") ?? 200, body: row[1] ?? "[]",
            revision: row[2].flatMap { Int64($0) }, lastModified: row[3].flatMap { Int64($0) }, id: row[4])
    }
}

/// What a planned write statement returns.
struct WriteResult {
    /// 201 when something was created, else 200.
    let status: Int
    /// The JSON array of rows (or tombstones), in request order.
    let body: String
    /// The highest revision written (the row's, for a single write).
    let revision: Int64?
    /// The highest last_modified written.
    let lastModified: Int64?
    /// The smallest id (the row's, for a single write).
    let id: String?

    /// The single row of a one-item write: the array's only element.
    var singleRow: [UInt8] {
        var bytes = Array(body.utf8)
        if bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") {
            bytes.removeFirst()
            bytes.removeLast()
        }
        return bytes
    }

    /// Headers for one row: its ETag (and Last-Modified).
    var rowHeaders: HTTPHeaders {
        var headers = HTTPHeaders()
        // ETag, Last-Modified, and the Content-Type or Location the caller adds: one allocation.
        headers.reserveCapacity(4)
        if let revision { headers.add("ETag", EntityTag.revision(String(revision))) }
        if let lastModified { headers.add("Last-Modified", HTTPDateFormat.format(milliseconds: lastModified)) }
        return headers
    }
}
