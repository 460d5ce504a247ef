import FerryHTTP
import Logging

extension FerryApp {
    /// The whole responder: the router with the operations routes added, and
    /// around its handlers, outermost first, request observation (metrics and
    /// the request log line), compact JSON, CORS, and with JWT providers the
    /// wait for a key being fetched (``UnknownKeyWait``).
    public func responder() -> any HTTPResponder {
        var router = router()
        registerOperationsRoutes(on: &router)
        metrics.observe(pool: pool)
        var middleware: [any Middleware] = [RequestObserver(metrics: metrics, logger: logger), CompactJSONResponder()]
        // The console's headers on all it answers, refusals included (docs/CONSOLE.md).
        if configuration.console.enabled { middleware.append(ConsoleHeadersResponder(logger: logger)) }
        // With no origin allowed, CORS only passes requests on: leave it out of every request's path.
        let cors = CORSPolicy(allowedOrigins: configuration.cors.allowedOrigins)
        if !cors.isDisabled { middleware.append(CORSResponder(policy: cors, sameOriginOnly: [ConsoleRoutes.prefix])) }
        // What the console shows of each user's refused writes and feed polls.
        if configuration.console.enabled { middleware.append(RefusalRecorder(queue: RefusalQueue(database: database, logger: logger))) }
        // A JWT whose key is being fetched waits for the fetch, parked (issue 51); innermost, so
        // that every step above sees the answer it resumes with as any other.
        if let jwt = database.jwt { middleware.append(UnknownKeyWait(database: database, verifier: jwt)) }
        return MiddlewareChain(middleware: middleware, router: router, logger: logger)
    }

    /// An HTTP server answering with ``responder()``, whose connection and
    /// in-flight gauges feed `/metrics`. Pass a configuration to adjust
    /// ``serverConfiguration`` (tests pick port 0).
    public func makeServer(_ configuration: HTTPServerConfiguration? = nil) -> HTTPServer {
        let server = HTTPServer(configuration: configuration ?? serverConfiguration, responder: responder(), logger: logger)
        metrics.observe(server: server)
        return server
    }

    /// `GET /metrics` and `GET /openapi.json`, both without authentication:
    /// scrapers and API tooling carry no user token. Keep `/metrics` off the
    /// public internet at the proxy (deploy/nginx.conf does).
    func registerOperationsRoutes(on router: inout Router) {
        let metrics = metrics
        let schema = schema
        let configuration = configuration
        router.get("/metrics") { _, _ in
            HTTPResponse(
                status: 200, headers: HTTPHeaders([("Content-Type", PrometheusText.contentType)]),
                bytes: Array(metrics.render().utf8))
        }
        // The routes as built so far (everything but these two), to describe only what is served.
        let routes = router
        let served: @Sendable (String, String) -> Bool = { method, path in
            if path == "/metrics" || path == "/openapi.json" { return method == "GET" }
            guard case .found(let pattern, let parameters) = routes.match(method: method, path: path) else { return false }
            // `/v1/changes` matches `/v1/:resource` until the feed's own route exists; Ferry's
            // reserved names are never resources, so that match does not count.
            if pattern.contains(":resource"), let name = parameters["resource"], SchemaCatalog.reservedNames.contains(name) {
                return false
            }
            return true
        }
        // The streams too (read as the schema load's rules say, once per load), for generators.
        let scopes = AccessScopeCache()
        let database = database
        let handle = RouteHandling(logger: logger)
        router.get(
            "/openapi.json",
            handle { _, _ in
                let generation = schema.generation
                let catalog = schema.catalog
                let streams = try scopes.listing(
                    for: catalog, generation: generation, schema: configuration.database.schema, database: database)
                return .json(OpenAPIDocument(catalog: catalog, configuration: configuration, streams: streams, served: served).json.bytes)
            })
    }
}
