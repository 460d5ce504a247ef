import FerryHTTP

/// The eight routes every resource answers, `/v1/<r>` and `/v1/<r>/<id>`,
/// each one trip through the pipeline: ``ResourceAction`` (what the request
/// asks) → ``ResourcePlan`` (the SQL) → ``ResourceExecutor`` (one round trip
/// as the caller, and what it found) → ``ResourceResponse`` (the answer). Ferry's own literal routes (`/v1/auth/...`,
/// `/v1/users`) win over these.
struct ResourceRoutes: Sendable {
    let schema: SchemaCache
    let plans = PlanCache()
    let limits: ResourceAction.Limits
    let executor: ResourceExecutor
    /// The schema's name, for its access scopes.
    let schemaName: String
    let scopes = AccessScopeCache()

    init(database: PostgresGateway, schema: SchemaCache, configuration: FerryConfiguration, paging: IndexPaging) {
        self.schema = schema
        limits = ResourceAction.Limits(
            maxBulkItems: configuration.limits.maxBulkItems,
            defaultLimit: configuration.paging.defaultLimit, maxLimit: configuration.paging.maxLimit)
        executor = ResourceExecutor(database: database, paging: paging)
        schemaName = configuration.database.schema
    }

    static let routes: [(method: String, pattern: String, route: ResourceAction.Route)] = [
        ("GET", "/v1/:resource", .index), ("POST", "/v1/:resource", .create),
        ("PATCH", "/v1/:resource", .bulkPatch), ("DELETE", "/v1/:resource", .bulkDelete),
        ("GET", "/v1/:resource/:id", .read), ("PUT", "/v1/:resource/:id", .put),
        ("PATCH", "/v1/:resource/:id", .patch), ("DELETE", "/v1/:resource/:id", .delete),
    ]

    func register(on router: inout Router, handle: RouteHandling) {
        let routes = self
        for (method, pattern, route) in Self.routes {
            router.add(method, pattern, handle { try routes.respond($0, $1, route) })
        }
    }

    func respond(_ request: HTTPRequest, _ context: RequestContext, _ route: ResourceAction.Route) throws -> HTTPResponse {
        let catalog = schema.catalog
        let action = try ResourceAction.parse(request, route: route, parameters: context.parameters, catalog: catalog, limits: limits)
        // The only input of planning that comes from the database, read once per catalog.
        var accessScopes: [AccessScope] = []
        if case .index = action.kind {
            accessScopes = try scopes.scopes(for: catalog, generation: schema.generation, schema: schemaName, database: executor.database)
        }
        let plan = ResourcePlanner(catalog: catalog, scopes: accessScopes, plans: plans).plan(action)
        let result = try executor.run(
            plan, as: context.caller(action.credential), readsPublic: catalog.hasPublicRows && action.readsPublic, for: request,
            pathID: action.pathID)
        return try ResourceResponse.make(result, conditions: plan.conditions)
    }
}
