/// What `GET /v1` says about the server's resources: the local store mirrors it.
public struct ServerSchema: Sendable, Equatable, Codable {
    /// One column of a resource.
    public struct Column: Sendable, Equatable, Codable {
        public let name: String
        /// PostgreSQL's type name (`uuid`, `text`, `bigint`, `boolean`, `jsonb`, ...).
        public let type: String
        /// The type its values are: for a column typed with a domain, the domain's base
        /// type (`integer` for a domain over integer); nil from a server that does not say.
        public let baseType: String?
        public let nullable: Bool
        /// Whether a client may send it (sync columns and server-owned ones are not).
        public let writable: Bool
        /// Whether an update may change it; false for a column set once, when
        /// the row is created (`terms.set_id`). Nil from a server that does not say.
        public let updatable: Bool?
        /// Whether the server fills it when a create leaves it out.
        public let hasDefault: Bool?
        /// The referenced resource, for a foreign key to one.
        public let references: String?

        enum CodingKeys: String, CodingKey {
            case name, type, baseType = "base_type", nullable, writable, updatable, hasDefault = "has_default", references
        }

        public init(
            name: String, type: String, nullable: Bool = true, writable: Bool = true, updatable: Bool? = nil, hasDefault: Bool? = false,
            references: String? = nil, baseType: String? = nil
        ) {
            (self.name, self.type, self.nullable, self.writable, self.hasDefault, self.references) = (
                name, type, nullable, writable, hasDefault, references
            )
            self.updatable = updatable
            self.baseType = baseType
        }

        /// The type the column's values are, by which they are stored and checked locally:
        /// ``baseType``, else ``type``.
        public var valueType: String { baseType ?? type }

        /// The sync columns the server maintains; the app never sets them.
        public static let syncColumns: Set<String> = ["id", "revision", "last_modified", "is_deleted"]

        /// Whether the app may change it in an existing row: a writable column
        /// that is not set once at creation.
        public var changeable: Bool { writable && updatable != false && !Self.syncColumns.contains(name) }
    }

    /// One resource (a table on the server).
    public struct Resource: Sendable, Equatable, Codable {
        public let name: String
        public let columns: [Column]
        /// A join table: all its own columns are references, unique together.
        public let joinTable: Bool?
        /// Rows ordered by a fractional `rank`.
        public let ranked: Bool?
        /// The column within whose value ranks order rows (`set_id` for terms).
        public let rankScope: String?

        enum CodingKeys: String, CodingKey { case name, columns, joinTable = "join_table", ranked, rankScope = "rank_scope" }

        public init(name: String, columns: [Column], joinTable: Bool? = false, ranked: Bool? = false, rankScope: String? = nil) {
            (self.name, self.columns, self.joinTable, self.ranked, self.rankScope) = (name, columns, joinTable, ranked, rankScope)
        }

        public func column(_ name: String) -> Column? { columns.first { $0.name == name } }

        /// Columns a client may send in a write body.
        /// The columns an update may carry: `id`, which GET /v1 calls writable on
        /// create (the client picks it), is the row's key, never a field of its body.
        public var writableColumns: [String] { columns.filter { $0.writable && $0.name != "id" }.map(\.name) }

        /// Resources this one references (its parents).
        public var parents: Set<String> { Set(columns.compactMap(\.references)) }
    }

    /// The live limits `GET /v1` gives (`"live"`); nil from a server that gives none.
    public struct Live: Sendable, Equatable, Codable {
        /// `live.max_wait_streams`: the most streams one `POST /v1/changes/wait` may name.
        public let maxWaitStreams: Int?

        enum CodingKeys: String, CodingKey { case maxWaitStreams = "max_wait_streams" }

        public init(maxWaitStreams: Int?) { self.maxWaitStreams = maxWaitStreams }
    }

    public let resources: [Resource]
    public let live: Live?

    public init(resources: [Resource], live: Live? = nil) { (self.resources, self.live) = (resources, live) }

    public subscript(name: String) -> Resource? { resources.first { $0.name == name } }
}
