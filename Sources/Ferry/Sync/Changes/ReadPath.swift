import FerryPostgres

/// One declarative sync rule (core migration 0019) as the changes feed reads
/// it (core 0021): who may read the rows of `table`, so that the feed looks
/// only there instead of walking every change since the cursor
/// (``ReadThrough``).
public struct ReadPath: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case owned, child, members, grant
    }

    public let table: String
    public let kind: Kind
    /// owned: the owner column; child: the parent column; members, grant: the scope column.
    public let column: String
    /// child: the parent table; members, grant: the scope (shared, granted) table.
    public let target: String?
    /// members: the column of the user the row gives access; grant: the
    /// column of the shared row whose members it gives access (core 0033).
    public let memberColumn: String?
    /// members: the generated function that returns the caller's live scope
    /// ids, as PostgreSQL quoted it (`app._ferry_scope_ids_set_collaborators()`);
    /// grant: the one that returns the scope ids the caller reads through it.
    public let scopeIDsFunction: String?
    /// The rule's policies are the table's only permissive read policies, so
    /// the rule says everything the caller may read of it.
    public let rulesOnly: Bool
    /// grant: the shared table whose members the rule reaches (`classes`).
    public let through: String?

    /// The rules of `schema` whose tables are served resources in `catalog`.
    /// A database from before core 0021 (a binary started ahead of `ferry
    /// migrate`) has none: the feed then walks every table as before.
    static func load(schema: String, catalog: SchemaCatalog, database: PostgresGateway) throws -> [ReadPath] {
        guard try database.anonymous([present])[0].rows.first?.bool(0) == true else { return [] }
        return try database.anonymous([statement(schema: schema)])[0].rows.compactMap { row in
            guard let table = row[0], let kind = row[1].flatMap(Kind.init(rawValue:)), let column = row[2],
                let resource = catalog[table], resource.column(column) != nil
            else { return nil }
            return ReadPath(
                table: table, kind: kind, column: column, target: row[3], memberColumn: row[4],
                scopeIDsFunction: row[5], rulesOnly: try row.bool(6) == true, through: row.count > 7 ? row[7] : nil)
        }
    }

    static let present = PlannedStatement("SELECT pg_catalog.to_regprocedure('ferry.read_paths(name)') IS NOT NULL")

    /// Reads the rules through `ferry.read_paths` (the serve role may not read
    /// `ferry.sync_rules`).
    static func statement(schema: String) -> PlannedStatement {
        PlannedStatement("SELECT * FROM ferry.read_paths($1)", [.text(schema)])
    }
}
