import FerryHTTP

/// The five actions on every resource, `/v1/<r>` and `/v1/<r>/<id>`.
/// Ferry's own literal routes (`/v1/auth/...`, `/v1/users`) win over these.
struct ResourceRoutes: Sendable {
    let actions: ResourceActions

    init(database: Database, schema: SchemaCache, configuration: FerryConfiguration, paging: IndexPaging) {
        actions = ResourceActions(
            database: database, schema: schema, plans: PlanCache(),
            maxBulkItems: configuration.limits.maxBulkItems,
            defaultLimit: configuration.paging.defaultLimit, maxLimit: configuration.paging.maxLimit, paging: paging,
            schemaName: configuration.database.schema)
    }

    func register(on router: inout Router, handle: RouteHandling) {
        let actions = actions
        router.get("/v1/:resource", handle { try actions.index($0, $1) })
        router.post("/v1/:resource", handle { try actions.create($0, $1) })
        router.patch("/v1/:resource", handle { try actions.bulkPatch($0, $1) })
        router.delete("/v1/:resource", handle { try actions.bulkDelete($0, $1) })
        router.get("/v1/:resource/:id", handle { try actions.read($0, $1) })
        router.put("/v1/:resource/:id", handle { try actions.update($0, $1, mode: .put) })
        router.patch("/v1/:resource/:id", handle { try actions.update($0, $1, mode: .patch) })
        router.delete("/v1/:resource/:id", handle { try actions.delete($0, $1) })
    }
}
