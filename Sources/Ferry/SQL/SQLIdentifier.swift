/// A table's, schema's or column's name as the schema catalog introspected
/// it, quoted for SQL text (``SQLQuery``'s `\(id:)`): the one way a name
/// enters a statement, apart from SQL literals written in Ferry's own code.
struct SQLIdentifier: Sendable, Hashable {
    /// The name, quoted (`"name"`, or `"schema"."name"`).
    let quoted: String

    /// A name read from the catalog.
    init(_ name: String) { quoted = SQL.id(name) }

    /// A schema-qualified name read from the catalog.
    init(schema: String, name: String) { quoted = SQL.id(schema) + "." + SQL.id(name) }
}
