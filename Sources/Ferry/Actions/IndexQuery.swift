// `package`, not internal: ferry-fuzz feeds it client bytes directly (bench/fuzz/README.md).
/// `GET /v1/<r>` query parameters, parsed and checked against the resource.
package struct IndexQuery: Sendable {
    /// `?col=v` (equality) or `?col=a,b` (IN), in the order given.
    package var filters: [(column: String, values: [String])] = []
    /// `?modified_since=<ms>`: rows changed after it, tombstones included.
    package var modifiedSince: Int64?
    /// `?include_deleted=true`.
    package var includeDeleted = false
    /// `?order=col[.asc|.desc],...`; ties always break on id.
    package var order: [(column: String, descending: Bool)] = []
    /// `?limit=`.
    package var limit: Int
    /// `?public=false`: only the rows the caller reads privately (owner,
    /// member), as the default changes feed holds them; FerryKit's initial
    /// sync asks so, so that public rows reach a device only by subscription.
    package var includePublic = true

    /// Names Ferry reads itself; every other name must be a column.
    static let reserved: Set<String> = ["modified_since", "include_deleted", "order", "limit", "paging_token", "page", "public"]

    /// Parses `query`; throws 400 `invalid_query` naming the problem.
    package init(_ query: [(name: String, value: String)], resource: Resource, defaultLimit: Int, maxLimit: Int) throws {
        limit = defaultLimit
        var seen: Set<String> = []
        for (name, value) in query {
            // Each of Ferry's own parameters once: which of two would win is nowhere said.
            if Self.reserved.contains(name), name != "paging_token", name != "page" {
                guard seen.insert(name).inserted else { throw Self.invalid("\(name) is given more than once") }
            }
            switch name {
            case "modified_since":
                guard let ms = QueryInteger.parse64(value) else {
                    throw Self.invalid("modified_since must be a non-negative integer (ms)")
                }
                modifiedSince = ms
            case "include_deleted":
                guard value == "true" || value == "false" else { throw Self.invalid("include_deleted must be true or false") }
                includeDeleted = value == "true"
            case "public":
                guard value == "true" || value == "false" else { throw Self.invalid("public must be true or false") }
                includePublic = value == "true"
            case "limit":
                guard let n = QueryInteger.parse(value), n >= 1, n <= maxLimit else {
                    throw Self.invalid("limit must be an integer from 1 to \(maxLimit)")
                }
                limit = n
            case "order":
                order = try value.split(separator: ",", omittingEmptySubsequences: false).map { part in
                    var name = Substring(part)
                    var descending = false
                    if name.hasSuffix(".desc") {
                        name = name.dropLast(5); descending = true
                    } else if name.hasSuffix(".asc") {
                        name = name.dropLast(4)
                    }
                    guard resource.column(String(name)) != nil else { throw Self.invalid("cannot order by \(part): no such column") }
                    return (String(name), descending)
                }
            case "paging_token", "page":
                break  // IndexPaging reads these.
            default:
                guard let column = resource.column(name) else { throw Self.invalid("unknown query parameter or column: \(name)") }
                // No equality to filter by: json, arrays, and the types of SQL.cannotFilter.
                guard !column.valueType.hasSuffix("[]"), column.valueType != "json", !SQL.cannotFilter(column.valueType) else {
                    throw Self.invalid("cannot filter on \(name) (\(column.type))")
                }
                let values = try FilterValues.parse(value, column: name)
                guard values.allSatisfy({ Self.fits($0, column.kind) }) else {
                    throw Self.invalid("a filter value does not fit its column's type")
                }
                filters.append((name, values))
            }
        }
    }

    static func invalid(_ detail: String) -> Problem { Problem(400, .invalidQuery, detail) }

    /// Whether a filter value is one spelling of a value of `kind`: Ferry's own
    /// (a UUID with or without its four hyphens, decimal digits, `true` or
    /// `false`), not every spelling PostgreSQL's input functions take (`{...}`
    /// around a UUID, `+5`, `yes`, `0` for false), so that the filter
    /// accepts exactly what `/openapi.json` describes. Other types are left
    /// to PostgreSQL (a value it refuses is still 400).
    static func fits(_ value: String, _ kind: ValueKind) -> Bool {
        switch kind {
        case .uuid: return ValueKind.isUUID(value)
        case .integer(let min, let max):
            let digits = value.utf8.dropFirst(value.hasPrefix("-") ? 1 : 0)
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int64(value) else { return false }
            return n >= min && n <= max
        case .boolean: return value == "true" || value == "false"
        default: return true
        }
    }

    /// The plan shape: everything but the values.
    var shape: String {
        filters.map(\.column).joined(separator: ",") + "|" + (modifiedSince == nil ? "" : "m") + (includeDeleted ? "d" : "")
            + "|" + order.map { $0.column + ($0.descending ? "-" : "+") }.joined(separator: ",")
    }

    /// The bound values, in the plan's parameter order: each filter's values,
    /// `modified_since` when given, the limit.
    var binds: [Bind] {
        filters.map { .texts($0.values) } + (modifiedSince.map { [.int($0)] } ?? []) + [.int(Int64(limit))]
    }
}
