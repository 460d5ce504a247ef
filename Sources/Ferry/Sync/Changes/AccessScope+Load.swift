import FerryPostgres

// The access scopes read through the gateway. The scope itself is a fact of
// the schema (Schema/AccessScope.swift), which the plans use below Execution.

extension AccessScope {
    /// The scopes of `schema` whose tables are both served resources in `catalog`.
    static func load(schema: String, catalog: SchemaCatalog, database: PostgresGateway) throws -> [AccessScope] {
        let result = try database.anonymous([statement(schema: schema)])[0]
        let scope = try result.column("scope_name", as: String.self), member = try result.column("member_name", as: String.self)
        let column = try result.column("member_column", as: String.self)
        let readThrough = try result.column("read_through_scope", as: Bool.self)
        return try result.rows.compactMap { row in
            guard let scope = try row.decode(scope), let member = try row.decode(member), let column = try row.decode(column),
                catalog[scope] != nil, catalog[member]?.column(column) != nil
            else { return nil }
            return AccessScope(scope: scope, member: member, column: column, readThroughScope: try row.decode(readThrough) == true)
        }
    }
}
