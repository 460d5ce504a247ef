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
        guard try database.anonymous([present])[0].first?.bool("present") == true else { return [] }
        let result = try database.anonymous([statement(schema: schema)])[0]
        let table = try result.column("table_name", as: String.self), kind = try result.column("kind", as: String.self)
        let column = try result.column("rule_column", as: String.self), target = try result.column("target_name", as: String.self)
        let member = try result.column("member_column", as: String.self)
        let scopeIDs = try result.column("scope_ids_function", as: String.self)
        let rulesOnly = try result.column("rules_only", as: Bool.self)
        // A database before the column came (a binary ahead of `ferry migrate`) names no table.
        let through = result.columns.contains("through_name") ? try result.column("through_name", as: String.self) : nil
        return try result.rows.compactMap { row in
            guard let tableName = try row.decode(table), let kind = try row.decode(kind).flatMap(Kind.init(rawValue:)),
                let columnName = try row.decode(column), let resource = catalog[tableName], resource.column(columnName) != nil
            else { return nil }
            return ReadPath(
                table: tableName, kind: kind, column: columnName, target: try row.decode(target), memberColumn: try row.decode(member),
                scopeIDsFunction: try row.decode(scopeIDs), rulesOnly: try row.decode(rulesOnly) == true,
                through: try through.flatMap { try row.decode($0) })
        }
    }

    static let present = PlannedStatement("SELECT pg_catalog.to_regprocedure('ferry.read_paths(name)') IS NOT NULL AS present")

    /// Reads the rules through `ferry.read_paths` (the serve role may not read
    /// `ferry.sync_rules`).
    static func statement(schema: String) -> PlannedStatement {
        PlannedStatement("SELECT * FROM ferry.read_paths(\(bind: schema))" as SQLQuery)
    }
}
