import FerryPostgres

// The access scopes read through the gateway. The scope itself is a fact of
// the schema (Schema/AccessScope.swift), which the plans use below Execution.

extension AccessScope {
    /// The scopes of `schema` whose tables are both served resources in `catalog`.
    static func load(schema: String, catalog: SchemaCatalog, database: PostgresGateway) throws -> [AccessScope] {
        try database.anonymous([statement(schema: schema)])[0].rows.compactMap { row in
            guard let scope = row[0], let member = row[1], let column = row[2],
                catalog[scope] != nil, catalog[member]?.column(column) != nil
            else { return nil }
            return AccessScope(scope: scope, member: member, column: column, readThroughScope: try row.bool(3) == true)
        }
    }
}
