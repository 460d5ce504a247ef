import FerryHTTP
import FerryPostgres

/// The console's row browser over one resource, past Row Level Security:
/// `GET /console/api/resources/<r>/rows`, tombstones included, paged through
/// Ferry's own paging snapshots in memcached (the same store, tokens and
/// rules as Index: a snapshot never skips a row, and belongs to the operator,
/// resource, filters and page size that made it).
///
/// Query: `<column>=<value>` (equality, any column; several are ANDed),
/// `writer=<user id>` (rows a user last wrote), `deleted=any|live|deleted`
/// (default `any`), `order=<column>[.asc|.desc]` (then id), `limit` (1 to
/// 200, default 50), and `paging_token` with `page` for the later pages.
struct ConsoleRowsQuery: Sendable, Equatable {
    static let defaultLimit = 50
    static let maxLimit = 200
    static let reserved: Set<String> = ["deleted", "order", "limit", "paging_token", "page", "writer"]

    /// Column to value; `_ferry_writer` for `writer`.
    var filters: [(column: String, value: String)] = []
    var deleted = "any"
    var order: String?
    var descending = false
    var limit = defaultLimit

    static func == (a: Self, b: Self) -> Bool {
        a.filters.map(\.column) == b.filters.map(\.column) && a.filters.map(\.value) == b.filters.map(\.value)
            && a.deleted == b.deleted && a.order == b.order && a.descending == b.descending && a.limit == b.limit
    }

    init(_ query: [(name: String, value: String)], resource: Resource) throws {
        var seen: Set<String> = []
        for (name, value) in query {
            guard seen.insert(name).inserted else { throw Self.invalid("\(name.prefix(64)) is given more than once") }
            switch name {
            case "deleted":
                guard ["any", "live", "deleted"].contains(value) else { throw Self.invalid("deleted is any, live or deleted") }
                deleted = value
            case "order":
                var column = Substring(value)
                if column.hasSuffix(".desc") {
                    column = column.dropLast(5); descending = true
                } else if column.hasSuffix(".asc") {
                    column = column.dropLast(4)
                }
                guard resource.column(String(column)) != nil else { throw Self.invalid("cannot order by \(value.prefix(64)): no such column") }
                order = String(column)
            case "limit":
                guard value.utf8.count <= 4, let n = QueryInteger.parse(value), (1...Self.maxLimit).contains(n) else {
                    throw Self.invalid("limit must be a whole number from 1 to \(Self.maxLimit)")
                }
                limit = n
            case "writer":
                guard ValueKind.isUUID(value) else { throw Self.invalid("writer is a user id") }
                filters.append(("_ferry_writer", value.lowercased()))
            case "paging_token", "page":
                break  // read with the snapshot
            default:
                guard let column = resource.column(name) else {
                    throw Self.invalid("unknown query parameter or column: \(name.prefix(64))")
                }
                let kind = column.kind
                guard Self.isFilterable(kind) else { throw Self.invalid("cannot filter on \(name) (\(column.type))") }
                guard IndexQuery.fits(value, kind), !value.utf8.contains(0) else {
                    throw Self.invalid("a filter value does not fit its column's type")
                }
                filters.append((name, value))
            }
        }
    }

    static func invalid(_ detail: String) -> Problem { Problem(400, .invalidQuery, detail) }

    /// Equality filters take text, uuid, integer and boolean columns, whose values Ferry checks itself.
    static func isFilterable(_ kind: ValueKind) -> Bool {
        switch kind {
        case .string, .uuid, .integer, .boolean: true
        default: false
        }
    }

    /// The filters as `ferry.console_rows` takes them: a JSON object of column to text.
    var filtersJSON: String {
        String(decoding: JSONValue.object(filters.map { ($0.column, .string($0.value)) }).bytes, as: UTF8.self)
    }
}

extension ConsoleRoutes {
    /// `GET /console/api/resources/<r>/rows`: `{"data": [...], "paging": {...}}`
    /// as Index answers, each row `{"row", "xid", "writer", "field_revisions"}`.
    func rows(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let resource = try resource(context)
        let query = try ConsoleRowsQuery(request.query, resource: resource)
        let paging = try PagingRequest(query: request.query)
        let hash = try Self.tokenHash(request)
        let audit = ConsoleDatabase.audit(
            hash, action: "browse_rows",
            target: [
                ("resource", .string(resource.name)), ("query", .string(request.rawQuery ?? "")),
            ], requestID: context.requestID)
        let fingerprint = { (operatorID: String) in
            PagingFingerprint(
                userID: operatorID, resource: "console:" + resource.name,
                canonicalQuery: PagingFingerprint.canonicalQuery(request.query), limit: query.limit)
        }
        let page: IndexPage
        if let text = paging.token {
            page = try laterRowsPage(
                request, resource: resource, token: text, page: paging.page, limit: query.limit,
                hash: hash, audit: audit, fingerprint: fingerprint, context: context)
        } else {
            let (session, results) = try console.run(
                hash,
                [
                    audit,
                    PlannedStatement(
                        """
                        SELECT r.total, encode(r.ids, 'hex') AS ids, r.data
                          FROM ferry.console_rows(\(bind: hash)::bytea, \(bind: resource.qualifiedName)::regclass, \(bind: .json(query.filtersJSON))::jsonb,
                                                  \(bind: query.deleted), \(bind: query.order.map { .text($0) } ?? .null), \(bind: query.descending),
                                                  \(bind: query.limit)::int) r
                        """ as SQLQuery),
                ])
            Self.trace(session, context)
            guard let row = results[1].first, let total = try row.int("total"), let data = row["data"] else {
                throw Problem(500, .internalError, "the rows query returned nothing")
            }
            let pages = max(1, (total + query.limit - 1) / query.limit)
            var token: String?
            if let hex = row["ids"] {
                var ids: [UInt8] = []
                guard UUIDBytes.appendConcatenated(hex, to: &ids) else { throw Problem(500, .internalError, "ids are not UUIDs") }
                do {
                    token = try self.paging.store.store(
                        ids: ids, fingerprint: fingerprint(session.id), userID: session.id,
                        pageSize: query.limit
                    ).0.text
                } catch {
                    throw PagingProblem.unavailable(retryAfter: self.paging.retryAfterSeconds)
                }
            }
            page = IndexPage(
                data: Array(data.utf8), token: token, page: 1, pages: pages, total: total,
                next: token.map { IndexPage.link(for: request, token: $0, page: 2) }, etag: "")
        }
        return .json(page.body)
    }

    /// A later page of the operator's snapshot; the same answers as Index's for
    /// a token that is not theirs (404), expired (410) or out of range (400).
    private func laterRowsPage(
        _ request: HTTPRequest, resource: Resource, token text: String, page: Int, limit: Int, hash: String,
        audit: PlannedStatement, fingerprint: (String) -> PagingFingerprint, context: RequestContext
    ) throws -> IndexPage {
        let (session, _) = try console.run(hash, [audit])
        Self.trace(session, context)
        guard let token = PagingToken(parsing: text) else { throw PagingProblem.notFound }
        switch paging.store.read(token: token, page: page, pageSize: limit) {
        case .expired:
            throw token.isBound(to: fingerprint(session.id)) ? PagingProblem.expired : PagingProblem.notFound
        case .absent, .incomplete:
            throw PagingProblem.notFound
        case .unavailable:
            throw PagingProblem.unavailable(retryAfter: paging.retryAfterSeconds)
        case .found(let header, let ids):
            guard header.userID == session.id, header.fingerprint == fingerprint(session.id) else { throw PagingProblem.notFound }
            guard page <= header.pages else { throw PagingProblem.pageOutOfRange(page, pages: header.pages) }
            let (_, results) = try console.run(
                hash,
                [
                    PlannedStatement(
                        """
                        SELECT ferry.console_rows_by_id(\(bind: hash)::bytea, \(bind: resource.qualifiedName)::regclass,
                                                        \(bind: UUIDBytes.arrayLiteral(ids))::uuid[]) AS rows
                        """ as SQLQuery)
                ])
            return IndexPage(
                data: Array((results[0].first?["rows"] ?? "[]").utf8), token: text, page: page, pages: header.pages,
                total: header.total, next: page < header.pages ? IndexPage.link(for: request, token: text, page: page + 1) : nil,
                etag: "")
        }
    }

    /// `GET /console/api/resources/<r>/rows/<id>`: one row (tombstone or not)
    /// and its history as far as Ferry keeps it (``ferry.console_row``); 404
    /// when there is no such row, or the id cannot be one of the resource's.
    func row(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, [])
        let resource = try resource(context)
        let id = context.parameters["id"] ?? ""
        let hash = try Self.tokenHash(request)
        let run: (OperatorSession, [PostgresResult])
        do {
            run = try console.run(
                hash,
                [
                    ConsoleDatabase.audit(
                        hash, action: "view_row", target: [("resource", .string(resource.name)), ("id", .string(id))],
                        requestID: context.requestID),
                    PlannedStatement(
                        "SELECT ferry.console_row(\(bind: hash)::bytea, \(bind: resource.qualifiedName)::regclass, \(bind: id)) AS history"
                            as SQLQuery),
                ])
        } catch let problem as Problem where problem.code == .invalidQuery {
            throw Problem.notFound("no such row")  // an id that cannot be one of this resource's names no row
        }
        Self.trace(run.0, context)
        guard let json = run.1[1].first?["history"] else { throw Problem.notFound("no such row") }
        return .json(JSONValue.object([("resource", .string(resource.name)), ("history", .raw(Array(json.utf8)))]).bytes)
    }
}
