import FerryBase

// What the served schema says, as Ferry read it at start or on SIGHUP: the
// catalog and its cache, each resource and its columns, and which JSON values
// fit a column's type.

/// The set of resources Ferry serves, read from the live catalog.
public struct SchemaCatalog: Sendable, Equatable {
    /// Route names Ferry itself owns under `/v1`; tables with these names are not exposed.
    public static let reservedNames: Set<String> = ["auth", "batch", "changes", "users"]

    /// The resources by name.
    public let resources: [String: Resource]
    /// Sync-enabled tables that were left out because their names collide with Ferry's routes.
    public let skipped: [String]
    /// Each resource's reference checks, derived once from the catalog (see `references(for:)`).
    let referenceChecks: [String: ReferenceCheck]
    /// Whether some rule makes rows readable by every signed-in user (`ferry.sync_public`).
    /// Without one, reads skip turning public reads on and off: two statements a request.
    public let hasPublicRows: Bool

    /// A catalog from introspected tables, leaving out reserved names.
    public init(tables: [Resource], hasPublicRows: Bool = false) {
        self.hasPublicRows = hasPublicRows
        var resources: [String: Resource] = [:]
        var skipped: [String] = []
        for table in tables {
            if Self.reservedNames.contains(table.name) { skipped.append(table.name) } else { resources[table.name] = table }
        }
        self.resources = resources
        self.skipped = skipped.sorted()
        referenceChecks = resources.mapValues { ReferenceCheck(resource: $0, resources: resources) }
    }

    /// The resource names in sorted order.
    public var names: [String] { resources.keys.sorted() }

    /// The resource called `name`, if exposed.
    public subscript(name: String) -> Resource? { resources[name] }
}

/// The catalog currently in force, swapped whole on reload (SIGHUP), so a
/// request always sees one consistent version.
///
/// Every request reads it; only a reload writes, so readers share the lock.
public final class SchemaCache: Sendable {
    private let current: Locked<(catalog: SchemaCatalog, generation: Int)>

    public init(_ catalog: SchemaCatalog) { current = Locked((catalog, 0)) }

    /// The catalog in force now.
    public var catalog: SchemaCatalog { current.withLock { $0.catalog } }

    /// How many times the schema was read again since start, whether or not
    /// the tables changed: what is read beside the catalog (policies, rules,
    /// access scopes) is read again after each.
    public var generation: Int { current.withLock { $0.generation } }

    /// Replaces the catalog; returns whether it changed.
    @discardableResult
    public func replace(with catalog: SchemaCatalog) -> Bool {
        current.withLock { old in
            defer { old = (catalog, old.generation + 1) }
            return old.catalog != catalog
        }
    }
}

/// A sync-enabled table exposed at `/v1/<name>`.
public struct Resource: Sendable, Equatable, Codable {
    /// The table name, which is the resource's path segment.
    public let name: String
    /// The schema that holds the table.
    public let schema: String
    /// The columns in table order, with Ferry's hidden `_ferry_*` bookkeeping left out.
    public let columns: [Column]
    /// Column sets with a unique constraint or unique index (partial ones included).
    public let uniqueKeys: [[String]]
    /// Constraint and unique-index names mapped to their columns, so that a
    /// violation PostgreSQL reports by name can name the fields.
    public let constraints: [String: [String]]?
    /// Its Row Level Security policies' names by command (`SELECT`, `INSERT`, `UPDATE`,
    /// `DELETE`, `ALL`), so that a refusal can name them.
    public var policies: [String: [String]]? = nil
    /// Whether some of its rows are readable by every signed-in user
    /// (`ferry.sync_public`, core 0025): nil when none can be.
    public var publicRows: PublicRows? = nil
    /// How Ferry makes the hints of a row its one-row UPDATE writes, so that the
    /// notify trigger's function is not entered (``RowHints``, issue 47 item 4); nil
    /// when the table has no row mark function or the serve role may update a scope
    /// column (the hints are made from the new row only).
    public var rowHints: RowHints? = nil

    /// What makes a resource's rows public: the boolean `flag` column of
    /// `resource` (itself, or the owned table its child rules read through, as
    /// a term's set).
    public struct PublicRows: Sendable, Equatable, Codable {
        public let flag: String
        public let resource: String
    }

    /// The column named `name`, if the resource has one.
    public func column(_ name: String) -> Column? { columns.first { $0.name == name } }

    /// A join table links two or more resources: all its own columns are
    /// references, and together they are unique (e.g. `folder_sets`).
    public var isJoinTable: Bool {
        let own = columns.filter { !Column.syncColumns.contains($0.name) }
        let refs = own.filter { $0.references != nil }.map(\.name)
        guard refs.count >= 2, refs.count == own.count else { return false }
        return uniqueKeys.contains { Set($0) == Set(refs) }
    }

    /// Whether rows are ordered within a parent by a fractional-index `rank`.
    public var isRanked: Bool { column("rank") != nil }

    /// `"schema"."table"`, quoted for SQL. Names come only from the catalog.
    public var qualifiedName: String { SQL.id(schema) + "." + SQL.id(name) }

    enum CodingKeys: String, CodingKey {
        case name, schema, columns, uniqueKeys = "unique_keys", constraints, policies, publicRows = "public", rowHints = "row_hints"
    }

    /// The policies that decide whether the caller may write a row: INSERT, UPDATE and ALL.
    var writePolicies: [String] {
        ["ALL", "INSERT", "UPDATE"].flatMap { policies?[$0] ?? [] }
    }

    /// Whether the serve role may delete rows: a delete is `UPDATE … SET is_deleted`.
    var deletable: Bool { column("is_deleted")?.updatable ?? false }

    /// The columns a constraint or unique index covers; empty when unknown.
    public func columns(ofConstraint name: String) -> [String] { constraints?[name] ?? [] }
}

extension Resource {
    /// The id column (every synced table has one).
    var idColumn: Column? { column("id") }

    /// The id column's kind, for parsing ids in paths and bodies.
    var idKind: ValueKind { idColumn?.kind ?? .uuid }

    /// The id column's SQL type; `uuid` when the table has no id column.
    var idType: String { idColumn?.type ?? "uuid" }

    /// Columns the client owns (not id, revision, last_modified, is_deleted).
    var dataColumns: [Column] { columns.filter { !Column.syncColumns.contains($0.name) } }

    /// Data columns a PATCH or PUT may change.
    var updatableColumns: [Column] { dataColumns.filter(\.updatable) }

    /// Data columns a PATCH or PUT may only echo unchanged.
    var readOnlyColumns: [Column] { dataColumns.filter { !$0.updatable } }
}

/// One column of a resource, as introspected from the live catalog.
public struct Column: Sendable, Equatable, Codable {
    /// The column name, which is also the JSON field name.
    public let name: String
    /// PostgreSQL's name for the type, as `format_type` prints it (`uuid`, `text`, `bigint`).
    public let type: String
    /// The type its values are: for a domain, its base type (through a domain over a
    /// domain), with the domain's length or precision (`integer`, `character varying(8)`);
    /// otherwise `type`. Nil from a catalog of before it (read as `type`).
    public var baseType: String? = nil
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
    /// The column's comment (`COMMENT ON COLUMN`), for documentation: GET /v1,
    /// the OpenAPI document and the models `ferry generate swift` writes.
    public var comment: String? = nil

    /// The sync columns the database maintains; clients never set them.
    public static let syncColumns: Set<String> = ["id", "revision", "last_modified", "is_deleted"]

    /// Whether a client may write this column in a create or update body. `id`
    /// is, on create, when the serve role may insert it: an app working offline
    /// picks its rows' ids (issue 48: GET /v1 called it not writable).
    public var writable: Bool {
        name == "id" ? insertable : !Column.syncColumns.contains(name) && (insertable || updatable)
    }

    /// Whether an update may change it: never `id`, whatever the grants.
    public var changeable: Bool { writable && updatable && name != "id" }

    enum CodingKeys: String, CodingKey {
        case name, type, baseType = "base_type", nullable, hasDefault = "has_default", insertable, updatable, references
        case defaultSQL = "default_sql", comment
    }

    /// What JSON the column takes, by its values' type: a domain's is its base type's
    /// (its own constraints still hold when a value is stored).
    var kind: ValueKind { ValueKind(type: valueType) }

    /// ``baseType``, or ``type`` when the catalog did not say.
    var valueType: String { baseType ?? type }

    /// Whether the column is typed with a domain (its values' type is another).
    var isDomain: Bool { valueType != type }

    /// The type a filter's values are read as: the values' type, without the length of
    /// `character varying(n)` or the precision of `numeric(p, s)`, whose casts cut a longer
    /// value or round it (so that `?code=ABCDEFGHIJ` would match `ABCDEFGH`). Not a domain:
    /// a value its CHECK refuses matches no row, where the cast would fail the query.
    var filterType: String {
        let type = valueType
        for prefix in ["character varying(", "numeric("] where type.hasPrefix(prefix) && type.hasSuffix(")") {
            return String(prefix.dropLast())
        }
        return type
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
        // An array first: `character varying(8)[]` and `numeric(6,2)[]` are arrays, not their element.
        case _ where type.hasSuffix("[]"): self = .array
        // citext may live in another schema than the search path's (`extensions.citext`).
        case "text", "name", "citext": self = .string
        case _ where type.hasSuffix(".citext"): self = .string
        case _ where type.hasPrefix("character"): self = .string
        case "uuid": self = .uuid
        case "smallint": self = .integer(min: Int64(Int16.min), max: Int64(Int16.max))
        case "integer": self = .integer(min: Int64(Int32.min), max: Int64(Int32.max))
        case "bigint": self = .integer(min: Int64.min, max: Int64.max)
        case "real", "double precision": self = .number
        case _ where type.hasPrefix("numeric"): self = .number
        case "boolean": self = .boolean
        case "json", "jsonb": self = .any
        default: self = .scalar
        }
    }

    static let uuidPattern = "^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"

    /// SQL that is true when the jsonb expression `value` (not JSON null) is of the JSON kind
    /// this kind takes (a string for a uuid, a number for an integer), fitting or not: a
    /// value of another kind is `wrong_type`, one of this kind that does not fit `check`
    /// (`"zzz"` for a uuid, 1.5 or 1e10 for an integer) `invalid_value` (docs/API.md).
    func kindCheck(_ value: String) -> String {
        switch self {
        case .uuid: return "jsonb_typeof(\(value)) = 'string'"
        case .integer: return "jsonb_typeof(\(value)) = 'number'"
        default: return check(value)
        }
    }

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
