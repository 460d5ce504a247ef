import FerryHTTP
import FerryPostgres
import Foundation

// How database failures become contract answers: SQLSTATEs and Ferry's own
// error codes to problems, failed write items to `errors[]`, and the words
// each refusal reason is given.

/// How database errors become contract answers.
///
/// Infrastructure trouble is temporary (503 with `Retry-After`, the client
/// retries); a bad token is 401. Everything else is returned as a
/// `PostgresError` with `statementIndex` shifted to the caller's own list, so
/// each action can map constraint violations to 409 or 422 itself.
enum DatabaseFailure {
    static func map(_ error: PostgresError, statementOffset: Int) -> Error {
        if error.sqlState == "FR401" { return Problem.unauthorized() }
        switch error.kind {
        case .connection: return Problem.unavailable("the database is unavailable")
        case .poolTimeout: return Problem.unavailable("the database is busy")
        case .timeout: return Problem.unavailable("the database did not answer in time")
        default: break
        }
        switch error.sqlState {
        case "40001", "40P01": return Problem.unavailable("the request lost a race with another writer; retry it")
        case "57014": return Problem.unavailable("the statement timed out")
        // disk_full: its own code, because only an operator can end it (reads go on meanwhile).
        case "53100":
            return Problem(
                503, .storageFull, "the database is out of disk space; writes are refused until space is freed",
                headers: HTTPHeaders([("Retry-After", "10")]))
        case let state? where state.hasPrefix("53") || state.hasPrefix("08") || state.hasPrefix("57P"):
            return Problem.unavailable("the database is unavailable")
        default:
            var shifted = error
            if let index = error.statementIndex { shifted.statementIndex = index - statementOffset }
            return shifted
        }
    }
}

/// How a failed write statement becomes a contract answer.
///
/// Planned statements refuse requests by raising SQLSTATE `FR400` with
/// `{"errors": [{index, id, status, code, ...}]}` in DETAIL (see
/// migrations/0003). Errors only the write itself can detect (constraints,
/// row level security, conversions) arrive as plain PostgreSQL errors for a
/// single item, and are mapped here the same way `ferry.item_errors` maps
/// them for bulk items.
enum WriteFailure {
    /// The problem for `error`, or `error` itself when it is not the client's doing.
    /// `id`: a single write's item's id (the path's, or a create's own), which its
    /// entries name as `ferry.item_errors` names a bulk item's; nil when unknown.
    static func map(_ error: Error, resource: Resource, single: Bool, id: Any? = nil) -> Error {
        guard let error = error as? PostgresError else { return error }
        if error.sqlState == "FR400", let detail = error.detail, let errors = RefusalDetail.errors(detail) {
            return problem(errors, single: single, resource: resource)
        }
        if let body = BodyFailure.map(error) { return body }
        guard let state = error.sqlState, state.hasPrefix("23") || state.hasPrefix("22") || state == "42501" else { return error }
        return problem(itemErrors(error, resource: resource, id: id), single: single, resource: resource)
    }

    /// One error entry per field, like `ferry.item_errors`.
    static func itemErrors(_ error: PostgresError, resource: Resource, id: Any? = nil) -> [[String: Any]] {
        let reason: String
        switch error.sqlState {
        case "23514": reason = "check_violation"
        case "23505": reason = "unique_violation"
        case "23503": reason = "not_found"
        case "23502": reason = "not_null"
        case "23P01": reason = "exclusion_violation"
        // Refused by Row Level Security, or for want of a grant: the cause is the row or
        // the role, never a column, so no field is named (core migration 0020 does the same).
        case "42501": reason = error.message.contains("row-level security") ? "not_allowed" : "not_granted"
        default: reason = "invalid_value"
        }
        var fields: [String] = []
        if error.sqlState == "42501" {
            fields = []
        } else if let column = error.column, !column.isEmpty {
            fields = [column]
        } else if let constraint = error.constraint, !constraint.isEmpty {
            fields = resource.columns(ofConstraint: constraint)
        }
        let entries: [Any] = fields.isEmpty ? [NSNull()] : fields
        // PostgreSQL's message goes along only for ValidationReason.clean to tell causes
        // apart by (as ferry.item_errors passes it); clean replaces every entry's detail.
        return entries.map { field in
            [
                "index": 0, "id": id ?? NSNull(), "status": 422, "code": "validation_failed", "field": field,
                "reason": reason, "detail": error.message,
            ]
        }
    }

    /// The problem for a list of failed items. A single write lifts the first
    /// entry's `current` and `conflicting_fields` to the top level; a bulk
    /// write answers the first failing item's status and lists them all.
    static func problem(_ errors: [[String: Any]], single: Bool, resource: Resource? = nil) -> Problem {
        let errors = combined(errors).map { ValidationReason.clean($0, resource: resource) }
        let first = errors[0]
        let status = first["status"] as? Int ?? 422
        // The SQL of writes names its codes as text; ProblemCodeTests holds every one it can
        // raise to ProblemCode, so an unknown one is a fault of the server's, not the request's.
        var code = (first["code"] as? String).map { ProblemCode(rawValue: $0) ?? .internalError } ?? .validationFailed
        if status == 422, errors.contains(where: { $0["code"] as? String == ProblemCode.unknownField.rawValue }) { code = .unknownField }
        // One 410 shape for reads and writes: the tombstone's fields, and it as `current`.
        if single, status == 410, code == .gone, let current = first["current"], let tombstone = raw(current) {
            let revision = (try? JSONDecoder().decode(Current.self, from: Data(tombstone)))?.revision
            return Problem.gone(tombstone: String(decoding: tombstone, as: UTF8.self), etag: revision.map(EntityTag.revision))
        }
        var extra: [(String, JSONValue)] = []
        if single {
            for key in ["current", "conflicting_fields"] {
                if let value = first[key], let raw = raw(value) { extra.append((key, .raw(raw))) }
            }
        }
        if let raw = raw(errors) { extra.append(("errors", .raw(raw))) }
        let failing = Set(errors.compactMap { $0["index"] as? Int }).count
        let detail = single ? describe(code) : "\(failing) item(s) failed; nothing was written"
        return Problem(status, code, detail, extra: extra)
    }

    /// The validators of a failed item's `current` row (the tombstone a 410
    /// answers with), decoded as the type the column has.
    struct Current: Decodable, Equatable {
        /// Absent when `current` is not a row (null).
        let revision: Revision?
    }

    /// The reasons a constraint over several columns gives: the combination is
    /// what violates it, never one of its columns.
    static let combinationReasons: Set<String> = ["unique_violation", "exclusion_violation"]

    /// `errors` with the entries one item got for one multi-column constraint
    /// (one per column, from `ferry.item_errors` or ``itemErrors``) made one entry
    /// naming the columns together, in `fields`, with `field` null: a duplicate
    /// `(list_id, user_id)` is one error about the pair, not two about fields that
    /// are each fine on their own (issue 48).
    static func combined(_ errors: [[String: Any]]) -> [[String: Any]] {
        var result: [[String: Any]] = []
        for entry in errors {
            if let reason = entry["reason"] as? String, combinationReasons.contains(reason), let field = entry["field"] as? String,
                var last = result.last, last["reason"] as? String == reason,
                last["index"] as? Int == entry["index"] as? Int
            {
                var fields = last["fields"] as? [String] ?? [last["field"] as? String].compactMap { $0 }
                guard !fields.isEmpty else { result.append(entry); continue }
                fields.append(field)
                last["fields"] = fields
                last["field"] = NSNull()
                result[result.count - 1] = last
            } else {
                result.append(entry)
            }
        }
        return result
    }

    private static func describe(_ code: ProblemCode) -> String {
        switch code {
        case .notFound: return "no such row"
        case .forbidden: return "the caller reads this row but may not write it"
        case .gone: return "the row is deleted"
        case .preconditionFailed: return "If-Match does not match the current revision"
        // Also the answer to a body's `revision` that is no revision ("1", 1.5, -1): said so.
        case .revisionRequired: return "send If-Match or a revision (a whole number, 0 or more) to update or delete"
        case .revisionConflict: return "the row changed since that revision"
        case .alreadyExists: return "a row with this id exists with other values"
        case .unknownField: return "the body has fields that are not columns"
        default: return "the body does not fit the resource"
        }
    }

    private static func raw(_ value: Any) -> [UInt8]? {
        if value is NSNull { return Array("null".utf8) }
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) else { return nil }
        return Array(data)
    }
}

/// Database errors that mean the request body itself is not acceptable JSON.
enum BodyFailure {
    /// 400 `invalid_json` for a body PostgreSQL could not parse as jsonb (bad
    /// syntax, a bad Unicode escape, a NUL byte, nesting beyond its stack), else nil.
    static func map(_ error: PostgresError) -> Problem? {
        let state = error.sqlState ?? ""
        // A JSON number past numeric's range (1e131072) fails the body's own jsonb cast, before
        // any column: no field to name. (Sent as a string for a numeric column, the same error
        // comes with the field the misfit question found, and stays a 422.)
        if state == "22003", error.message == "value overflows numeric format", (error.column ?? "").isEmpty {
            return Problem(400, .invalidJson, "the body is not valid JSON here: a number is past what PostgreSQL reads (1e131072 and up)")
        }
        let isBody =
            ["22P05", "22021", "54001"].contains(state)
            || (["22P02", "2202E"].contains(state) && error.message.contains("json"))
        guard isBody else { return nil }
        // The cause, in PostgreSQL's words where it gives one ("Unicode low surrogate must
        // follow a high surrogate."): of the client's own body, naming no one else's data.
        if state == "22P05" {
            return Problem(400, .invalidJson, "the body is not valid JSON here: a string holds \\u0000 (U+0000), which PostgreSQL text cannot hold")
        }
        if state == "54001" { return Problem(400, .invalidJson, "the body is not valid JSON here: it nests too deeply") }
        guard let detail = error.detail, !detail.isEmpty, detail.utf8.count <= 200 else {
            return Problem(400, .invalidJson, "the body is not valid JSON")
        }
        return Problem(400, .invalidJson, "the body is not valid JSON: \(detail)")
    }
}

/// The words Ferry uses for a refused field, by the stable `reason` code of an
/// `errors[]` entry.
///
/// PostgreSQL's own messages never reach a client: they name tables,
/// constraints and policies (the schema's internals, and for RLS a hint of
/// rows the caller cannot see), and they change between releases. Every
/// `errors[]` entry's `detail` is replaced here, wherever the entry was made
/// (`ferry.item_errors` in SQL, or `WriteFailure.itemErrors`).
enum ValidationReason {
    /// The client-facing detail for `reason`, naming `field` when there is one.
    static func detail(reason: String, field: String?) -> String {
        let subject = field.map { "\($0)" } ?? "a value"
        switch reason {
        case "check_violation": return "\(subject) is outside the values this resource accepts"
        case "unique_violation": return "another row already has this \(field.map { "\($0)" } ?? "value")"
        case "not_found": return "\(subject) names a row that does not exist, or that the caller cannot see or may only read"
        case "not_null": return "\(subject) is required"
        case "exclusion_violation": return "\(subject) conflicts with another row"
        case "not_allowed": return "Row Level Security refused this row: no policy lets the caller write it"
        case "not_granted": return "the server's database role lacks a grant this write needs"
        case "offline_unsafe_id": return "\(subject) comes from the server, which a device offline cannot make: clients must send ids"
        case "parent_deleted": return "\(subject) names a row that has been deleted"
        case "required": return "\(subject) is required"
        case "duplicate": return "the request names this row more than once"
        case "read_only": return "\(subject) is read-only: the server sets it, or the row keeps the value it was made with"
        case "unknown_field": return "\(subject) is not a column of this resource"
        case "not_an_object": return "this item is not a JSON object; each item of a bulk write is one row's fields"
        case "invalid_value" where field == "rank":
            return "rank is not a key (1 to 128 of 0-9A-Za-z, not ending in 0), first, last, {\"after\": id} or {\"before\": id}"
        default: return "\(subject) does not fit its column"
        }
    }

    /// `entry` with its `detail` in Ferry's words; entries without a `reason`
    /// (conflicts, 404s) keep what Ferry itself wrote. A refusal by Row Level Security
    /// names the resource's policies for writes, one for want of a grant the grants
    /// writes need: what an operator must look at, whatever the client sent.
    static func clean(_ entry: [String: Any], resource: Resource? = nil) -> [String: Any] {
        guard let reason = entry["reason"] as? String else { return entry }
        var entry = entry
        if reason == "not_granted", let resource, let id = serverMadeId(entry, resource: resource) {
            entry["reason"] = "offline_unsafe_id"
            entry["field"] = "id"
            entry["detail"] = id
            return entry
        }
        entry["detail"] = detail(reason: reason, field: entry["field"] as? String)
        if let fields = entry["fields"] as? [String], fields.count > 1 {
            let named = fields.dropLast().joined(separator: ", ") + " and " + fields[fields.count - 1]
            entry["detail"] =
                reason == "unique_violation"
                ? "another row already has this \(named) together" : "this \(named) together conflicts with another row"
        }
        if let resource, reason == "not_allowed" {
            let names = resource.writePolicies
            entry["detail"] =
                "Row Level Security refused this row: "
                + (names.isEmpty
                    ? "\(resource.name) has no policy for writes"
                    : "no policy of \(resource.name) for writes (\(names.joined(separator: ", "))) lets the caller write it")
        } else if let resource, reason == "wrong_type", let field = entry["field"] as? String,
            let expected = resource.column(field).flatMap({ Self.jsonKind($0.kind) })
        {
            entry["detail"] = "\(field) takes \(expected): the value sent is another kind of JSON value"
        } else if let resource, reason == "not_granted" {
            entry["detail"] =
                "the server's database role lacks a grant this write needs on \(resource.name): INSERT on the "
                + "fields of a create, UPDATE on those of an update, UPDATE (is_deleted) for a delete"
        }
        return entry
    }

    /// What JSON a column of `kind` takes, as a `wrong_type` detail says it; nil where
    /// several kinds do (text PostgreSQL parses, any JSON).
    private static func jsonKind(_ kind: ValueKind) -> String? {
        switch kind {
        case .string: "a string"
        case .uuid: "a string (a uuid)"
        case .integer: "a whole number"
        case .number: "a JSON number"
        case .boolean: "true or false"
        case .array: "an array"
        case .any, .scalar: nil
        }
    }

    /// The detail for a create refused because the id was left to a sequence the serve
    /// role may not use, else nil. The grant is missing by design (a rule grants no
    /// sequence): the real cause is an id a device cannot make offline, and what the
    /// developer must change is the id column, not the grants (issue 48).
    private static func serverMadeId(_ entry: [String: Any], resource: Resource) -> String? {
        guard let message = entry["detail"] as? String, message.contains("for sequence"),
            let id = resource.idColumn, let made = id.defaultSQL, made.contains("nextval")
        else { return nil }
        return "\(resource.name).id is \(id.type == "uuid" ? "a uuid" : "an \(id.type)") the database makes from a sequence "
            + "(DEFAULT \(made)), which a device offline cannot make and the server's database role may not use: "
            + "clients must send ids, so the id column should be a uuid without a sequence (ferry check reports "
            + "offline_unsafe_id)"
    }
}
