/// One column of a resource, as introspected from the live catalog.
public struct Column: Sendable, Equatable, Codable {
    /// The column name, which is also the JSON field name.
    public let name: String
    /// PostgreSQL's name for the type, as `format_type` prints it (`uuid`, `text`, `bigint`).
    public let type: String
    /// Whether NULL is allowed.
    public let nullable: Bool
    /// Whether the column has a default (so a create may leave it out).
    public let hasDefault: Bool
    /// Whether the serve role may set it on insert.
    public let insertable: Bool
    /// Whether the serve role may change it on update.
    public let updatable: Bool
    /// The resource a foreign key on this column points at, if any.
    public let references: String?
    /// The column default as SQL (`pg_get_expr`), e.g. `gen_random_uuid()`; nil without one.
    /// It comes from the catalog, written by the schema's owner, so plans may inline it.
    public let defaultSQL: String?

    /// The sync columns the database maintains; clients never set them.
    public static let syncColumns: Set<String> = ["id", "revision", "last_modified", "is_deleted"]

    /// Whether a client may write this column in a create or update body.
    public var writable: Bool { !Column.syncColumns.contains(name) && (insertable || updatable) }

    enum CodingKeys: String, CodingKey {
        case name, type, nullable, hasDefault = "has_default", insertable, updatable, references
        case defaultSQL = "default_sql"
    }
}

/// What JSON a column accepts, derived from its PostgreSQL type.
///
/// PostgreSQL's `jsonb_populate_record` is lenient (a JSON number fills a
/// text column), so the plans check JSON types themselves, per field, to
/// report every wrong type as a 422 rather than storing `"5"` for `5`.
enum ValueKind: Equatable {
    case string
    case uuid
    case integer(min: Int64, max: Int64)
    case number
    case boolean
    case array
    case any
    /// Anything PostgreSQL parses from text (timestamps, enums, ...): a string, number or boolean.
    case scalar

    init(type: String) {
        switch type {
        case "text", "name", "citext": self = .string
        case _ where type.hasPrefix("character"): self = .string
        case "uuid": self = .uuid
        case "smallint": self = .integer(min: Int64(Int16.min), max: Int64(Int16.max))
        case "integer": self = .integer(min: Int64(Int32.min), max: Int64(Int32.max))
        case "bigint": self = .integer(min: Int64.min, max: Int64.max)
        case "real", "double precision": self = .number
        case _ where type.hasPrefix("numeric"): self = .number
        case "boolean": self = .boolean
        case "json", "jsonb": self = .any
        case _ where type.hasSuffix("[]"): self = .array
        default: self = .scalar
        }
    }

    static let uuidPattern = "^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"

    /// SQL that is true when the jsonb expression `value` (not JSON null) fits.
    /// CASE keeps the numeric cast from running on non-numbers.
    func check(_ value: String) -> String {
        let type = "jsonb_typeof(\(value))"
        switch self {
        case .string: return "\(type) = 'string'"
        case .uuid: return "(\(type) = 'string' AND (\(value) #>> '{}') ~ '\(Self.uuidPattern)')"
        case .integer(let min, let max):
            let n = "(\(value) #>> '{}')::numeric"
            return "CASE WHEN \(type) = 'number' THEN \(n) = trunc(\(n)) AND \(n) BETWEEN \(min) AND \(max) ELSE false END"
        case .number: return "\(type) = 'number'"
        case .boolean: return "\(type) = 'boolean'"
        case .array: return "\(type) = 'array'"
        case .any: return "true"
        case .scalar: return "\(type) IN ('string', 'number', 'boolean')"
        }
    }

    /// SQL turning the text expression `raw` into `type`, or NULL when it does
    /// not look like one (ids in bulk bodies, so a bad id is an item error).
    func safeCast(_ raw: String, type: String) -> String {
        switch self {
        case .uuid: return "CASE WHEN \(raw) ~ '\(Self.uuidPattern)' THEN (\(raw))::uuid END"
        case .integer(let min, let max):
            return "CASE WHEN \(raw) ~ '^-?[0-9]{1,19}$' AND (\(raw))::numeric BETWEEN \(min) AND \(max) THEN (\(raw))::\(type) END"
        default: return "(\(raw))::\(type)"
        }
    }

    /// Whether a path or query id is well formed for this kind (others are left to PostgreSQL).
    func accepts(id: String) -> Bool {
        switch self {
        case .uuid: return Self.isUUID(id)
        case .integer(let min, let max):
            guard let n = Int64(id) else { return false }
            return n >= min && n <= max
        default: return !id.isEmpty
        }
    }

    static func isUUID(_ s: String) -> Bool {
        // Checked on every request that names a row: no allocation, and over the
        // contiguous bytes (the generic UTF8View walk was several times slower).
        var s = s
        return s.withUTF8 { bytes in
            let count = bytes.count
            guard count == 32 || count == 36 else { return false }
            for position in 0..<count {
                let byte = bytes[position]
                if count == 36, position == 8 || position == 13 || position == 18 || position == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102) else {
                    return false
                }
            }
            return true
        }
    }
}
