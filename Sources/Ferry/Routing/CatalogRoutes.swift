import FerryHTTP

/// `GET /v1`: the resources and their columns, the streams a device may
/// subscribe to, and the live limits a client plans its waits by, for clients
/// and tooling.
struct CatalogRoutes: Sendable {
    let database: PostgresGateway
    let schema: SchemaCache
    /// The app schema's name, whose streams are listed.
    let schemaName: String
    /// `live.max_wait_streams`: a client waits on at most this many streams with one `POST /v1/changes/wait`.
    let maxWaitStreams: Int
    private let scopes = AccessScopeCache()

    init(database: PostgresGateway, schema: SchemaCache, schemaName: String, maxWaitStreams: Int) {
        self.database = database
        self.schema = schema
        self.schemaName = schemaName
        self.maxWaitStreams = maxWaitStreams
    }

    func register(on router: inout Router, handle: RouteHandling) {
        router.get(
            "/v1",
            handle { request, context in
                // Every /v1 route needs a valid token, this listing included.
                _ = try database.asCaller(context.caller(try Caller.credential(request)), [])
                let generation = schema.generation
                let catalog = schema.catalog
                let streams = try scopes.listing(for: catalog, generation: generation, schema: schemaName, database: database)
                return .json(Self.listing(catalog, streams: streams, maxWaitStreams: maxWaitStreams).bytes)
            })
    }

    static func listing(_ catalog: SchemaCatalog, streams: [StreamListing] = [], maxWaitStreams: Int? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("resources", .array(catalog.names.compactMap { catalog[$0] }.map(entry))),
            ("streams", .array(streams.map(\.json))),
        ]
        // A client with more streams than one wait takes splits them, instead of meeting a 400.
        if let maxWaitStreams { members.append(("live", .object([("max_wait_streams", .int(maxWaitStreams))]))) }
        return .object(members)
    }

    /// One resource as the listing shows it; the OpenAPI document carries the
    /// same in its row schema (`x-ferry-resource`), for generators.
    static func entry(_ resource: Resource) -> JSONValue {
        .object([
            ("name", .string(resource.name)),
            ("path", .string("/v1/" + PercentEncoding.encoded(resource.name))),
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
                            ("name", .string(column.name)), ("type", .string(column.type)), ("base_type", .string(column.valueType)),
                            ("nullable", .bool(column.nullable)), ("writable", .bool(column.writable)),
                            ("updatable", .bool(column.changeable)),
                            ("has_default", .bool(column.hasDefault)),
                            ("references", column.references.map { .string($0) } ?? .null),
                            ("comment", column.comment.map { .string($0) } ?? .null),
                        ])
                    })
            ),
            // Rows readable by every signed-in user (`ferry.sync_public`): which flag,
            // of which resource's row (this one, or the owned row it hangs from).
            (
                "public",
                resource.publicRows.map { .object([("flag", .string($0.flag)), ("resource", .string($0.resource))]) } ?? .null
            ),
        ])
    }
}
