import FerryHTTP
import FerryPostgres

/// The one place a resource action touches PostgreSQL: runs a
/// ``ResourcePlan`` as the caller, each step one pipelined round trip with
/// the token check in front (``Database/asCaller(_:_:)``), and turns the rows
/// into the contract's answer.
struct ResourceExecutor: Sendable {
    let database: Database
    let paging: IndexPaging

    /// The answer `plan` gives `caller`, for `request` (paging reads its
    /// token and builds its links from it).
    func run(_ plan: ResourcePlan, as caller: Caller, for request: HTTPRequest) throws -> HTTPResponse {
        switch plan {
        case .refuse(let problem):
            _ = try database.asCaller(caller, [])
            throw problem
        case .read(let statement, let conditions):
            return try read(statement, conditions, caller)
        case .readMany(let statement, let conditions):
            let row = try first(statement, caller, onDataException: .badRequest("malformed id in the list"))
            guard let row, let body = row[0] else { throw Problem.notFound() }
            let etag = "\"m-\(row[1] ?? "")\""
            if conditions.notModified(etag: etag, lastModifiedMs: nil) {
                return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: nil)
            }
            return .json(Array(body.utf8), headers: HTTPHeaders([("ETag", etag)]))
        case .index(let statement, let limit, let conditions):
            return try index(statement, limit: limit, conditions, caller)
        case .pagedIndex(let query, let resource, let limit, let conditions):
            let answer: IndexPaging.Answer
            do {
                answer = try paging.page(
                    request: request, caller: caller, resource: resource, query: query, limit: limit,
                    notModified: { conditions.notModified(etag: $0, lastModifiedMs: nil) })
            } catch let error as PostgresError where error.isDataException {
                throw Self.filterMismatch
            }
            switch answer {
            case .notModified(let etag): return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: nil)
            case .page(let page): return page.response()
            }
        case .write(let statement, let resource, let single, let created):
            guard let result = try write(statement, resource, caller, single: single) else {
                throw Problem(500, "internal_error", "the write returned nothing")
            }
            guard created else { return .json(Array(result.body.utf8)) }
            guard single else { return .json(Array(result.body.utf8), status: result.status) }
            var headers = result.rowHeaders
            if let id = result.id { headers.add("Location", "/v1/\(resource.name)/\(id)") }
            return .json(result.singleRow, status: result.status, headers: headers)
        case .update(let fast, let exact, let resource):
            let result: WriteResult?
            if let fast, let written = try write(fast, resource, caller, single: true) {
                result = written
            } else {
                result = try write(exact, resource, caller, single: true)
            }
            guard let result else { throw Problem(500, "internal_error", "the write returned nothing") }
            return .json(result.singleRow, headers: result.rowHeaders)
        }
    }

    private static let filterMismatch = IndexQuery.invalid("a filter value does not fit its column's type")

    private func read(_ statement: PlannedStatement, _ conditions: ReadConditions, _ caller: Caller) throws -> HTTPResponse {
        // Invisible and nonexistent rows take the same path: no row.
        let row = try first(statement, caller, onDataException: .notFound("no such row"))
        guard let row, let revision = row[0] else { throw Problem.notFound("no such row") }
        let lastModified = try row.int64(1)
        let etag = EntityTag.revision(revision)
        if try row.bool(2) == true, let tombstone = row[3] { throw Self.gone(tombstone: tombstone, etag: etag) }
        if conditions.notModified(etag: etag, lastModifiedMs: lastModified) {
            return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: lastModified)
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

    private func index(_ statement: PlannedStatement, limit: Int, _ conditions: ReadConditions, _ caller: Caller) throws -> HTTPResponse {
        guard let row = try first(statement, caller, onDataException: Self.filterMismatch), let data = row[0] else {
            throw Problem.notFound()
        }
        let total = try row.int(1) ?? 0
        let pages = max(1, (total + limit - 1) / limit)
        let etag = "\"i-\(total)-\(row[2] ?? "0")\""
        if conditions.notModified(etag: etag, lastModifiedMs: nil) {
            return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: nil)
        }
        var body = Array(#"{"data":"#.utf8)
        body += data.utf8
        body += #","paging":{"token":null,"page":1,"pages":\#(pages),"total":\#(total),"next":null"#.utf8
        if pages > 1 { body += #","complete":false"#.utf8 }
        body += "}}".utf8
        return .json(body, headers: HTTPHeaders([("ETag", etag)]))
    }

    /// The first row of `statement`'s result, nil for none; a value PostgreSQL
    /// cannot read as its column's type (SQLSTATE class 22) answers `onDataException`.
    private func first(_ statement: PlannedStatement, _ caller: Caller, onDataException: @autoclosure () -> Problem) throws -> PostgresRow? {
        do {
            return try database.asCaller(caller, [statement])[0].first
        } catch let error as PostgresError where error.isDataException {
            throw onDataException()
        }
    }

    /// Runs one write statement; nil when it returned no row (a fast path that
    /// did not apply). Database errors become contract answers.
    private func write(_ statement: PlannedStatement, _ resource: Resource, _ caller: Caller, single: Bool) throws -> WriteResult? {
        let result: PostgresResult
        do {
            result = try database.asCaller(caller, [statement])[0]
        } catch {
            throw WriteFailure.map(error, resource: resource, single: single)
        }
        guard let row = result.first else { return nil }
        return WriteResult(
            status: try row.int(0) ?? 200, body: row[1] ?? "[]", revision: try row.int64(2), lastModified: try row.int64(3), id: row[4])
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
        extra.append(("current", .raw(bytes)))
        var headers = HTTPHeaders()
        if let etag { headers.add("ETag", etag) }
        return Problem(410, "gone", "the row is deleted", extra: extra, headers: headers)
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
        let bytes = body.utf8
        guard bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else { return Array(bytes) }
        // One copy of the row, not a copy of the array and then a shift of it.
        return Array(bytes.dropFirst().dropLast())
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

extension PostgresError {
    /// SQLSTATE class 22: a value PostgreSQL could not read as its type.
    var isDataException: Bool { sqlState?.hasPrefix("22") == true }
}
