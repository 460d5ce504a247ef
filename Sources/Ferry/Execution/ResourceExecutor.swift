import FerryHTTP
import Foundation
import FerryPostgres

/// The one place a resource action touches PostgreSQL: runs a
/// ``ResourcePlan`` as the caller, each step one pipelined round trip with
/// the token check in front (``PostgresGateway/asCaller(_:_:)``), and returns what
/// the rows say (``ResourceResult``); the answer is ``ResourceResponse``'s.
struct ResourceExecutor: Sendable {
    let database: PostgresGateway
    let paging: IndexPaging

    /// What `plan`'s statements find for `caller`, for `request` (paging reads its
    /// token and builds its links from it). ``ResourceResponse`` makes the answer.
    /// `readsPublic`: the action reads public rows (``ResourceAction/readsPublic``) and
    /// the catalog has some (``SchemaCatalog/hasPublicRows``); otherwise the
    /// statements run exactly as they would without core 0025.
    /// `pathID`: the row a PUT, PATCH or DELETE names, for a refused write's `errors[]`.
    func run(_ plan: ResourcePlan, as caller: Caller, readsPublic: Bool, for request: HTTPRequest, pathID: String? = nil) throws
        -> ResourceResult
    {
        try execute(plan, as: readsPublic ? caller.readingPublic : caller, for: request, pathID: pathID)
    }

    private func execute(_ plan: ResourcePlan, as caller: Caller, for request: HTTPRequest, pathID: String?) throws -> ResourceResult {
        switch plan {
        case .refuse(let problem):
            _ = try database.asCaller(caller, [])
            throw problem
        case .read(let statement, _):
            // Invisible and nonexistent rows take the same path: no row.
            let row = try first(statement, caller, onDataException: .notFound("no such row"))
            guard let row, let revision = try row.revision("revision") else { throw Problem.notFound("no such row") }
            let lastModified = try row.int64("last_modified")
            if try row.bool("is_deleted") == true, let tombstone = row["json"] { return .tombstone(json: tombstone, revision: revision) }
            return .row(json: row["json"], revision: revision, lastModified: lastModified)
        case .readMany(let statement, _):
            let row = try first(statement, caller, onDataException: .badRequest("malformed id in the list"))
            guard let row, let body = row["body"] else { throw Problem.notFound() }
            return .rows(json: body, fingerprint: row["fingerprint"] ?? "")
        case .index(let statement, let limit, _):
            guard let row = try first(statement, caller, onDataException: Self.filterMismatch), let data = row["data"] else {
                throw Problem.notFound()
            }
            return .index(data: data, total: try row.int("total") ?? 0, fingerprint: row["fingerprint"] ?? "0", limit: limit)
        case .pagedIndex(let query, let resource, let limit, let conditions):
            do {
                // Paging compares the snapshot's tag itself, so that a 304 costs no page read.
                return .page(
                    try paging.page(
                        request: request, caller: caller, resource: resource, query: query, limit: limit,
                        notModified: { conditions.notModified(etag: $0, lastModifiedMs: nil) }))
            } catch let error as PostgresError where error.isDataException {
                throw Self.filterMismatch
            }
        case .write(let statement, let resource, let single, let created):
            let itemID = { pathID.map { $0 as Any } ?? (single ? Self.bodyID(request) : nil) }
            guard let result = try write(statement, resource, caller, single: single, itemID: itemID()) else {
                throw Problem(500, .internalError, "the write returned nothing")
            }
            return .written(result, created ? .created(resource: resource.name, single: single) : .bulk)
        case .update(let fast, let exact, let resource):
            let result: WriteResult?
            if let fast, let written = try write(fast, resource, caller, single: true, itemID: pathID) {
                result = written
            } else {
                result = try write(exact, resource, caller, single: true, itemID: pathID)
            }
            guard let result else { throw Problem(500, .internalError, "the write returned nothing") }
            return .written(result, .one)
        }
    }

    private static let filterMismatch = IndexQuery.invalid("a filter value does not fit its column's type")

    /// The first row of `statement`'s result, nil for none; a value PostgreSQL
    /// cannot read as its column's type (SQLSTATE class 22) answers `onDataException`.
    private func first(_ statement: PlannedStatement, _ caller: Caller, onDataException: @autoclosure () -> Problem) throws -> PostgresRow? {
        do {
            return try database.asCaller(caller, [statement])[0].first
        } catch let error as PostgresError where error.isDataException {
            throw onDataException()
        }
    }

    /// A single create's own id, as its body gives it and as the create's other refusals
    /// name it (`item -> 'id'`: the JSON value, the last of a member named twice); nil
    /// when the database makes it. Read only for a refusal's `errors[]`.
    private static func bodyID(_ request: HTTPRequest) -> Any? {
        guard let members = ObjectMembers(request.body),
            let member = members.last(named: "id", in: request.body)
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(request.body[member.valueBytes]), options: [.fragmentsAllowed])
    }

    /// Runs one write statement; nil when it returned no row (a fast path that
    /// did not apply). Database errors become contract answers, naming `itemID`.
    private func write(
        _ statement: PlannedStatement, _ resource: Resource, _ caller: Caller, single: Bool, itemID: @autoclosure () -> Any?
    ) throws -> WriteResult? {
        let result: PostgresResult
        do {
            result = try database.asCaller(caller, [statement], writes: true)[0]
        } catch var error as PostgresError where single && error.isDataException && (error.column ?? "").isEmpty {
            // PostgreSQL names no column for a value it refused: ask which field it was.
            error.column = misfitField(statement, resource, holdingConnection: caller.transaction != nil)
            throw WriteFailure.map(error, resource: resource, single: single, id: itemID())
        } catch {
            throw WriteFailure.map(error, resource: resource, single: single, id: single ? itemID() : nil)
        }
        guard let row = result.first else { return nil }
        // Every write statement names its columns as `ferry.write_items` returns them.
        return WriteResult(
            status: try row.int("status") ?? 200, body: row["body"] ?? "[]", revision: try row.revision("revision"),
            lastModified: try row.int64("last_modified"), id: row["id"])
    }
}

extension ResourceExecutor {
    /// The first field of a single write's item whose value alone does not read as its
    /// column's type (`ferry.misfit_fields`); nil when none does or the question fails
    /// (a database whose function files are older than this server's).
    ///
    /// Asked in a transaction of its own, never the caller's: the write's transaction
    /// is aborted, and inside a batch or an idempotent write it is still open, so a
    /// question joining it got no answer and the field stayed null there. The question
    /// reads no row, only the table's column types, so it needs no caller identity.
    ///
    /// `holdingConnection`: the write's transaction still holds a pooled connection (a
    /// batch, an idempotent write). The question then takes a free connection or none:
    /// waiting for one while holding one, requests doing the same could hold every slot
    /// and wait each other out (the acquire timeout) for a field name. With every
    /// connection in use the 422 names no field.
    private func misfitField(_ statement: PlannedStatement, _ resource: Resource, holdingConnection: Bool) -> String? {
        // Every write statement takes its items, a JSON array, as its first parameter (WriteParameters).
        guard let items = statement.binds.first else { return nil }
        let question = PlannedStatement(
            "SELECT ferry.misfit_fields(\(bind: resource.qualifiedName)::regclass, \(bind: items)::jsonb -> 0) ->> 0 AS field"
                as SQLQuery)
        let answer: [PostgresResult]?? =
            holdingConnection ? try? database.anonymousIfFree([question]) : try? database.anonymous([question])
        return answer??.first?.first?["field"]
    }
}

extension PostgresError {
    /// SQLSTATE class 22: a value PostgreSQL could not read as its type.
    var isDataException: Bool { sqlState?.hasPrefix("22") == true }
}
