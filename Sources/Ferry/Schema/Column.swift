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
