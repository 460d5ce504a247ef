import FerryHTTP

/// `GET /v1`: the resources and their columns, for clients and tooling.
struct CatalogRoutes: Sendable {
    let database: PostgresGateway
    let schema: SchemaCache

    func register(on router: inout Router, handle: RouteHandling) {
        router.get(
            "/v1",
            handle { request, context in
                // Every /v1 route needs a valid token, this listing included.
                _ = try database.asCaller(context.caller(try Caller.credential(request)), [])
                return .json(Self.listing(schema.catalog).bytes)
            })
    }

    static func listing(_ catalog: SchemaCatalog) -> JSONValue {
        .object([("resources", .array(catalog.names.compactMap { catalog[$0] }.map(entry)))])
    }

    /// One resource as the listing shows it; the OpenAPI document carries the
    /// same in its row schema (`x-ferry-resource`), for generators.
    static func entry(_ resource: Resource) -> JSONValue {
        .object([
            ("name", .string(resource.name)),
            ("path", .string("/v1/\(resource.name)")),
            ("join_table", .bool(resource.isJoinTable)),
            ("ranked", .bool(resource.isRanked)),
            // What a client needs to act offline as the server would: within which
            // parent a rank orders rows, which column sets are unique (a join
            // table's pair), which columns the server fills when left out, and
            // which are set once, at creation (writable but not updatable).
            ("rank_scope", resource.isRanked ? RankRewriter.parentColumn(resource).map { .string($0) } ?? .null : .null),
            ("unique_keys", .array(resource.uniqueKeys.map { .array($0.map { .string($0) }) })),
            (
                "columns",
                .array(
                    resource.columns.map { column in
                        .object([
                            ("name", .string(column.name)), ("type", .string(column.type)),
                            ("nullable", .bool(column.nullable)), ("writable", .bool(column.writable)),
                            ("updatable", .bool(column.changeable)),
                            ("has_default", .bool(column.hasDefault)),
                            ("references", column.references.map { .string($0) } ?? .null),
                            ("comment", column.comment.map { .string($0) } ?? .null),
                        ])
                    })
            ),
        ])
    }
}
