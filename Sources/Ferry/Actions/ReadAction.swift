import FerryHTTP
import FerryPostgres

extension ResourceActions {
    /// `GET /v1/<r>/<id>` and multi-show `GET /v1/<r>/<id>,<id>,...`.
    func read(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let (hash, resource, _) = try resource(request, context)
        if context.parameters["id"]?.utf8.contains(UInt8(ascii: ",")) == true { return try multiShow(request, context, resource, hash: hash) }
        let id = try pathID(context, resource, hash: hash)
        let sql = plans.sql(resource, "read") { ReadPlan(resource: resource).single }
        let unchanged = EntityTag.noneMatchRevisions(request.headers["If-None-Match"]).map { SQL.arrayLiteral($0.map { String($0) }) }
        let result: PostgresResult
        do {
            result = try database.asCaller(tokenHash: hash, [PostgresStatement(sql, [id, unchanged])])[0]
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            throw Problem.notFound("no such row")
        }
        // Invisible and nonexistent rows take the same path: no row.
        guard let row = result.first, let revision = row[0] else { throw Problem.notFound("no such row") }
        let lastModified = row[1].flatMap { Int64($0) }
        let etag = EntityTag.revision(revision)
        if row[2] == "t", let tombstone = row[3] { throw Self.gone(tombstone: tombstone, etag: etag) }
        if ConditionalRead.notModified(request, etag: etag, lastModifiedMs: lastModified) {
            return ConditionalRead.response(etag: etag, lastModifiedMs: lastModified)
        }
        // The body is left out only when If-None-Match names this revision, which is a 304 above.
        guard let json = row[3] else { throw Problem(500, "internal_error", "the row came back without its body") }
        var headers = HTTPHeaders()
        // ETag, Last-Modified and the Content-Type `.json` adds, in one allocation.
        headers.reserveCapacity(4)
        headers.add("ETag", etag)
        if let lastModified { headers.add("Last-Modified", HTTPDateFormat.format(milliseconds: lastModified)) }
        return .json(Array(json.utf8), headers: headers)
    }

    /// 410 `gone` whose body carries the tombstone's fields, and the tombstone as
    /// `current`: the one shape of every 410 on a row, read or write (docs/API.md).
    /// Fields that would collide with the problem's own members stay in `current` only.
    static func gone(tombstone: String, etag: String?) -> Problem {
        var extra: [(String, JSONValue)] = []
        // The tombstone's fields as PostgreSQL wrote them, in key order.
        let bytes = Array(tombstone.utf8)
        let reserved: Set<String> = ["type", "title", "status", "code", "detail", "current"]
        let fields = (ObjectMembers(bytes)?.members ?? []).map { (String(decoding: bytes[$0.key], as: UTF8.self), $0.valueBytes) }
        for (key, value) in fields.sorted(by: { $0.0 < $1.0 }) where !reserved.contains(key) {
            extra.append((key, .raw(Array(bytes[value]))))
        }
        extra.append(("current", .raw(Array(tombstone.utf8))))
        var headers = HTTPHeaders()
        if let etag { headers.add("ETag", etag) }
        return Problem(410, "gone", "the row is deleted", extra: extra, headers: headers)
    }

    private func multiShow(_ request: HTTPRequest, _ context: RequestContext, _ resource: Resource, hash: String) throws -> HTTPResponse {
        var seen = Set<String>()
        let ids = (context.parameters["id"] ?? "").split(separator: ",").map(String.init).filter { seen.insert($0).inserted }
        guard ids.count <= maxLimit else {
            throw Problem(422, "too_many_items", "multi-show takes at most \(maxLimit) ids")
        }
        // Malformed ids name no row: they are simply missing.
        let parsed = ids.map { resource.idKind.accepts(id: $0) ? $0 : nil }
        let sql = plans.sql(resource, "multi") { ReadPlan(resource: resource).multi }
        let statement = PostgresStatement(sql, [SQL.arrayLiteral(ids), SQL.arrayLiteral(parsed)])
        let result: PostgresResult
        do {
            result = try database.asCaller(tokenHash: hash, [statement])[0]
        } catch let error as PostgresError where error.sqlState?.hasPrefix("22") == true {
            throw Problem(400, "bad_request", "malformed id in the list")
        }
        guard let row = result.first, let body = row[0] else { throw Problem.notFound() }
        let etag = "\"m-\(row[1] ?? "")\""
        if ConditionalRead.notModified(request, etag: etag, lastModifiedMs: nil) {
            return ConditionalRead.response(etag: etag, lastModifiedMs: nil)
        }
        return .json(Array(body.utf8), headers: HTTPHeaders([("ETag", etag)]))
    }
}
