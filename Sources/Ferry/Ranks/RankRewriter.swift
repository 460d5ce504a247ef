import FerryHTTP
import FerryRank
import Foundation

/// The rank rules of a write to a ranked resource, applied before the action
/// sees the body:
/// - a literal `rank` must be a valid FerryRank key (else 422
///   `validation_failed`, field `rank`, with FerryRank's reason);
/// - `"first"`, `"last"`, `{"after": id}` and `{"before": id}` are replaced by
///   a key that FerryRank computes from the neighbours, read in the same
///   transaction as the write (a second round trip, only for these forms).
///
/// Bodies whose ranks are all valid literal keys (or that have none) pass
/// through untouched after one byte scan (``RankScan``); only the others are
/// decoded, and the body is re-encoded with JSONSerialization only when a key
/// was computed.
///
/// Concurrency: two requests computing a key at the same spot at the same
/// time may get equal keys. That is legal (ties order by id) and keeps
/// writes free of locks.
struct RankRewriter: Middleware {
    let database: PostgresGateway
    let schema: SchemaCache

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        guard request.method != "DELETE", let name = context.parameters["resource"],
            let resource = schema.catalog[name], resource.isRanked, RankScan(request.body) == .needsParse,
            let json = try? JSONSerialization.jsonObject(with: Data(request.body))
        else { return try next(request, context) }
        let single = json is [String: Any]
        let decoded: [[String: Any]]? = if let object = json as? [String: Any] { [object] } else { json as? [[String: Any]] }
        guard var items = decoded else { return try next(request, context) }
        let pathID = context.parameters["id"]
        var forms: [(Int, RankForm)] = []
        var errors: [[String: Any]] = []
        for (index, item) in items.enumerated() {
            guard let raw = item["rank"] else { continue }
            guard let form = RankForm(json: raw) else {
                // An object is a placement the server computes, misspelt (`{"between": …}`,
                // both `after` and `before`, an id that is no string): a value the contract
                // does not take, not a field of the wrong type. A number or the like is left
                // to the action, whose 422 says `wrong_type`.
                if raw is [String: Any] {
                    errors.append(Self.error(index: index, id: pathID ?? RankForm.id(item["id"]), field: "rank", reason: "invalid_value"))
                }
                continue
            }
            if case .key(let key) = form {
                do throws(RankError) { try Rank.validate(key) } catch {
                    errors.append(Self.error(index: index, id: pathID ?? RankForm.id(item["id"]), field: "rank", reason: "invalid_value"))
                }
            }
            forms.append((index, form))
        }
        let caller = context.caller(try Caller.credential(request))
        if !errors.isEmpty {
            throw try everyError(errors, items: items, single: single, request: request, context: context, caller: caller, next: next)
        }
        guard forms.contains(where: { $0.1.isComputed }) else { return try next(request, context) }
        return try database.callerTransaction(caller) { transaction in
            try place(
                resource, &items, forms: forms, pathID: pathID, create: request.method == "POST", single: single,
                transaction: transaction)
            var rewritten = request
            let data = try JSONSerialization.data(withJSONObject: single ? items[0] as Any : items as Any)
            rewritten.body = Array(data)
            let response = try next(rewritten, context.joining(transaction))
            return response.status < 400 ? .commit(response) : .rollback(response)
        }
    }

    /// The 422 for bad literal ranks, listing every other bad field too, as
    /// FieldValidation does: the action runs once more with valid stand-in
    /// ranks, in a transaction that is rolled back (or, inside a batch or an
    /// idempotent write, whose owner rolls back on this 422), and its 422
    /// errors join the rank errors.
    private func everyError(
        _ rankErrors: [[String: Any]], items: [[String: Any]], single: Bool, request: HTTPRequest, context: RequestContext,
        caller: Caller, next: Next
    ) throws -> Problem {
        var stand = items
        for error in rankErrors { if let index = error["index"] as? Int { stand[index]["rank"] = "V" } }
        var probe = request
        probe.body = Array(try JSONSerialization.data(withJSONObject: single ? stand[0] as Any : stand as Any))
        let other = try database.callerTransaction(caller) { .rollback(try next(probe, context.joining($0))) }
        var all = rankErrors
        if other.status == 422, case .bytes(let body) = other.body,
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let errors = object["errors"] as? [[String: Any]]
        {
            all += errors
        }
        let sorted = all.enumerated().sorted { a, b in
            let (x, y) = (a.element["index"] as? Int ?? 0, b.element["index"] as? Int ?? 0)
            return x != y ? x < y : a.offset < b.offset
        }.map(\.element)
        return WriteFailure.problem(sorted, single: single)
    }

    /// Replaces every computed form in `items` with a key. Items are placed
    /// in body order, each seeing the ones before it, so several items sent
    /// `"last"` keep their order.
    private func place(
        _ resource: Resource, _ items: inout [[String: Any]], forms: [(Int, RankForm)], pathID: String?, create: Bool,
        single: Bool, transaction: CallerTransaction
    ) throws {
        let parent = Self.parentColumn(resource)
        let selfIDs: [String?] = items.map { create ? nil : (pathID ?? RankForm.id($0["id"])) }
        let parents: [String?] = items.map { item in parent.flatMap { RankForm.id(item[$0]) } }
        let anchors: [String] = forms.compactMap { _, form in
            switch form {
            case .after(let id), .before(let id): return id
            default: return nil
            }
        }
        let (lists, selfParents) = try neighbours(
            resource, parent: parent, parents: parents.compactMap { $0 }, selves: selfIDs.compactMap { $0 },
            anchors: anchors, transaction: transaction)
        var scopes = lists
        var errors: [[String: Any]] = []
        for (index, form) in forms {
            let itemID = selfIDs[index] ?? RankForm.id(items[index]["id"])
            let scope: String
            if let selfID = selfIDs[index] {
                guard let found = selfParents[selfID] else {
                    items[index]["rank"] = "V"  // no such row (or not the caller's): a stand-in, so the action answers its 404
                    continue
                }
                scope = found
            } else if let parent {
                guard let given = parents[index] else {
                    errors.append(Self.error(index: index, id: itemID, field: parent, reason: "required"))
                    continue
                }
                scope = given
            } else {
                scope = ""
            }
            var list = scopes[scope] ?? RankedList()
            if let selfID = selfIDs[index] { list.remove(id: selfID) }
            let key: String
            if create, let itemID, let stored = list.rank(of: itemID) {
                key = stored  // a retried create keeps its key, so the retry stays identical
            } else {
                do throws(RankError) {
                    key = try list.key(for: form)
                } catch {
                    errors.append(Self.error(index: index, id: itemID, field: "rank", reason: Self.reason(error)))
                    continue
                }
                list.insert(id: itemID ?? "", rank: key)
            }
            scopes[scope] = list
            items[index]["rank"] = key
        }
        if !errors.isEmpty { throw WriteFailure.problem(errors, single: single) }
    }

    /// The live rows of the parents involved, in order, and the parent of
    /// each row being updated. Only rows the caller can see (RLS).
    private func neighbours(
        _ resource: Resource, parent: String?, parents: [String], selves: [String], anchors: [String],
        transaction: CallerTransaction
    ) throws -> ([String: RankedList], [String: String]) {
        let statement = Self.neighboursStatement(resource, parent: parent, parents: parents, selves: selves, anchors: anchors)
        let result = try transaction.run([statement])[0]
        var lists: [String: RankedList] = [:]
        var selfParents: [String: String] = [:]
        let idColumn = try result.column("id", as: String.self), scopeColumn = try result.column("scope", as: String.self)
        let rankColumn = try result.column("rank", as: String.self), ownColumn = try result.column("own", as: Bool.self)
        for row in result.rows {
            guard let id = try row.decode(idColumn), let scope = try row.decode(scopeColumn), let rank = try row.decode(rankColumn)
            else { continue }
            if try row.decode(ownColumn) == true {
                selfParents[id] = scope
            } else {
                var list = lists[scope] ?? RankedList()
                list.insert(id: id, rank: rank)
                lists[scope] = list
            }
        }
        return (lists, selfParents)
    }

    /// The statement behind `neighbours`. Columns: `id`, `scope` (the parent, as
    /// text), `rank`, `own` (whether the row is one being updated).
    ///
    /// A deleted row named as an anchor (`{"after": id}`) stays in its list at its
    /// rank: an offline client placed the new row next to a row someone else has
    /// since deleted, and meant that place (docs/API.md, Ordered rows).
    static func neighboursStatement(
        _ resource: Resource, parent: String?, parents: [String], selves: [String], anchors: [String] = []
    ) -> PlannedStatement {
        let table = resource.qualifiedName
        let scope = { (alias: String) in parent.map { "\(alias).\(SQL.id($0))::text" } ?? "''" }
        // The given ids are cast to the columns' types once (an InitPlan), never the
        // columns to text: `set_id::text = ANY(...)` could use no index, and read the
        // whole table on every write that computes a rank. Text that is no id of
        // that type casts to NULL and matches nothing.
        let typed = { (parameter: SQLParameter, type: String) in
            "ARRAY(SELECT \(ValueKind(type: type).safeCast("x", type: type)) FROM unnest(\(parameter)::text[]) x)"
        }
        var binds = SQLBinds()
        let (parentsParameter, selvesParameter, anchorsParameter) = (
            binds.bind(.texts(parents)), binds.bind(.texts(selves)), binds.bind(.texts(anchors))
        )
        let selfIDs = typed(selvesParameter, resource.idType)
        let inScope =
            parent.map { column in
                let c = SQL.id(column)
                let parentIDs = typed(parentsParameter, resource.column(column)?.valueType ?? "text")
                // Both arms compare the column with an array computed once, so that the OR
                // is a BitmapOr of two index scans; `IN (subquery)` would make it a filter.
                return "(t.\(c) = ANY(\(parentIDs)) OR t.\(c) = ANY(ARRAY(SELECT s.\(c) FROM \(table) s WHERE s.\"id\" = ANY(\(selfIDs)))))"
            } ?? "true"
        let sql = """
            SELECT t."id"::text AS id, \(scope("t")) AS scope, t."rank" AS rank, false AS own FROM \(table) t
             WHERE (NOT t."is_deleted" OR t."id" = ANY(\(typed(anchorsParameter, resource.idType)))) AND \(inScope)
            UNION ALL
            SELECT s."id"::text, \(scope("s")), s."rank", true FROM \(table) s WHERE s."id" = ANY(\(selfIDs))
            ORDER BY own, rank, id
            """
        return binds.statement(sql)
    }

    /// The column that names the parent a row is ordered within: the first
    /// reference that is not to a user (`set_id` for terms). None: one
    /// order over the whole table.
    static func parentColumn(_ resource: Resource) -> String? {
        resource.columns.first { column in
            guard let target = column.references else { return false }
            return !Column.syncColumns.contains(column.name) && !target.contains("users")
        }?.name
    }

    /// The stable `reason` code of a refused rank form: an anchor naming no
    /// row is a reference to no row the caller can see (`not_found`); a bound
    /// that leaves no room for a key is a value that does not fit.
    static func reason(_ error: RankError) -> String {
        error == RankedList.noNeighbour("after") || error == RankedList.noNeighbour("before") ? "not_found" : "invalid_value"
    }

    static func error(index: Int, id: String?, field: String, reason: String) -> [String: Any] {
        ["index": index, "id": id.map { $0 as Any } ?? NSNull(), "status": 422, "code": "validation_failed", "field": field, "reason": reason]
    }
}

// `package`, not internal: ferry-fuzz feeds it client bytes directly (bench/fuzz/README.md).
/// A byte-level pass over a write body that settles the common case without
/// decoding JSON: every `"rank": "<key>"` holds a valid literal key (or there
/// is none). Anything it cannot settle (a computed form, an invalid key, an
/// escape, a non-string value) asks for the full parse.
package enum RankScan: Equatable {
    /// No `"rank"` key anywhere.
    case none
    /// Every `"rank"` key holds a valid literal key.
    case valid
    /// Decode the body and look properly.
    case needsParse

    package init(_ body: [UInt8]) {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        let name = Array("rank".utf8)
        var found = false
        var i = 0
        let n = body.count
        func skipSpace(_ j: inout Int) {
            while j < n, body[j] == 0x20 || body[j] == 0x09 || body[j] == 0x0A || body[j] == 0x0D { j += 1 }
        }
        while i < n {
            let byte = body[i]
            // `\u0072ank` would spell the key without the bytes: escapes go the long way.
            if byte == backslash, i + 1 < n, body[i + 1] == UInt8(ascii: "u") { self = .needsParse; return }
            guard byte == quote, i + 5 < n, body[i + 5] == quote, body[(i + 1)..<(i + 5)].elementsEqual(name) else {
                i += 1
                continue
            }
            var j = i + 6
            skipSpace(&j)
            guard j < n, body[j] == UInt8(ascii: ":") else { i += 6; continue }  // the word "rank" as a value
            j += 1
            skipSpace(&j)
            guard j < n, body[j] == quote else { self = .needsParse; return }
            var k = j + 1
            while k < n, body[k] != quote {
                if body[k] == backslash { self = .needsParse; return }
                k += 1
            }
            guard k < n else { self = .needsParse; return }
            let key = String(decoding: body[(j + 1)..<k], as: UTF8.self)
            guard key != "first", key != "last", (try? Rank.validate(key)) != nil else { self = .needsParse; return }
            found = true
            i = k + 1
        }
        self = found ? .valid : .none
    }
}
