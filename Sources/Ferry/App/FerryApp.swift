import FerryBase
import FerryHTTP
import FerryMemcached
import FerryPostgres
import Logging

/// Ferry assembled: the database pool, the schema catalog and the routes.
///
/// `ferry serve` builds one, and so do the integration tests, which is why
/// nothing here reads the environment or installs signal handlers.
public final class FerryApp: Sendable {
    /// The configuration in force.
    public let configuration: FerryConfiguration
    /// The serve role's connections, for start-up and operations (the catalog,
    /// the tombstone purger, the pool gauges); requests go through ``database``.
    public let pool: PostgresPool
    /// The serve role's database access, the only way a request reaches PostgreSQL.
    public let database: PostgresGateway
    /// The resources, reloadable.
    public let schema: SchemaCache
    /// Counters and gauges served at `/metrics`; features bump theirs here.
    public let metrics: FerryMetrics
    /// memcached, for paging snapshots.
    public let memcached: MemcachedClient
    /// Index paging over `database` and `memcached`.
    public let paging: IndexPaging
    /// The live changes feed: the waiting long polls and event streams, and
    /// the LISTEN connection that wakes them (and reloads the schema when a
    /// migration says so).
    public let live: LiveFeed
    /// What holds the feed's frontier back, asked by `/readyz` and `/metrics`.
    public let feedHold: FeedHoldWatch
    let logger: Logger

    /// Connects the pool and reads the catalog; throws when PostgreSQL is
    /// unreachable at start-up, so a misconfigured deployment fails loudly.
    public init(configuration: FerryConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        let db = configuration.database
        let pool = PostgresPool(
            url: db.url, size: db.poolSize, acquireTimeout: .milliseconds(db.acquireTimeoutMs),
            statementTimeoutMs: db.statementTimeoutMs > 0 ? db.statementTimeoutMs : nil, answerTimeout: db.answerTimeout,
            preparedStatements: db.preparedStatements, applicationName: "ferry",
            onConnect: Self.sessionSetup(preparedStatements: db.preparedStatements, jit: db.jit)
        )
        self.pool = pool
        let auth = configuration.auth
        // The providers' keys are read (and fetched) before anything serves.
        let jwt =
            try auth.jwtProviders.isEmpty
            ? nil
            : JWTVerifier(
                providers: auth.jwtProviders, timing: auth.keyTiming, leewaySeconds: auth.jwtLeewaySeconds, logger: logger)
        let schema = SchemaCache(try Self.loadCatalog(pool: pool, schema: db.schema, logger: logger))
        self.schema = schema
        // The listener forgets a disabled user's cached checks in the gateway, which is made
        // after it: the gateway hands its hints to the live feed's outbox.
        let forget = Locked<PostgresGateway?>(nil)
        live = try LiveFeed(
            configuration: configuration, logger: logger, onUserRevoked: { user in forget.withLock { $0 }?.forgetUser(user) },
            onSchemaChange: { Self.reload(schema, pool: pool, schemaName: db.schema, logger: logger) })
        // Writes hand their hints to the live feed after commit instead of notifying (core 0028).
        let gateway = PostgresGateway(
            pool: pool, tokenCacheSeconds: auth.tokenCacheSeconds, builtinTokens: auth.builtinTokens, jwt: jwt,
            hints: { [outbox = live.outbox] made, collected in outbox.publish(made, collected: collected) })
        forget.withLock { $0 = gateway }
        database = gateway
        let metrics = FerryMetrics()
        self.metrics = metrics
        memcached = try MemcachedClient(configuration: Self.memcachedConfiguration(configuration.memcached))
        paging = IndexPaging(
            database: database,
            store: PagingSnapshotStore(
                memcached: memcached, ttlSeconds: configuration.paging.tokenTTLSeconds, metrics: metrics),
            retryAfterSeconds: configuration.memcached.retryTimeoutSeconds, logger: logger)
        live.start()
        feedHold = FeedHoldWatch(database: database, limitSeconds: configuration.live.maxFeedHoldSeconds)
        // In this order, the order of their lines at `/metrics`.
        metrics.observe(feedHold: feedHold)
        metrics.observe(live: live)
    }

    /// With prepared statements, every statement is planned once per connection.
    /// Ferry's statements take values only as parameters (ids, JSON bodies,
    /// filters) and their shape, not those values, decides the plan (primary
    /// keys, the resource's indexes); PostgreSQL's default
    /// (`auto`) still replans the large write statements on every call because
    /// their generic cost estimate is higher, and bench/api/api.sh found that planning
    /// took several times as long as the PATCH itself (see bench/api/README.md). Behind
    /// a transaction-mode PgBouncer this SET may not follow the session; planning
    /// then just stays `auto`.
    ///
    /// JIT is off unless configured on: PostgreSQL decides it from the plan's
    /// estimated cost, and the changes page, Index and bulk statements are
    /// estimated above its thresholds (the union of every stream, each costed as
    /// if it might scan its table), so it compiled hundreds of functions on every
    /// request, for nothing the executed plan needed. Both settings are sent as
    /// one statement, once per connection.
    static func sessionSetup(preparedStatements: Bool, jit: Bool) -> (@Sendable (PostgresConnection) throws -> Void)? {
        var settings = [String]()
        if preparedStatements { settings.append("SET plan_cache_mode = force_generic_plan") }
        if !jit { settings.append("SET jit = off") }
        guard !settings.isEmpty else { return nil }
        let sql = settings.joined(separator: "; ")
        return { connection in try connection.execute(sql) }
    }

    /// Re-reads the catalog (SIGHUP, or a migration's NOTIFY); keeps the old one
    /// when the database cannot be read.
    public func reloadSchema() {
        Self.reload(schema, pool: pool, schemaName: configuration.database.schema, logger: logger)
    }

    /// What SIGHUP does: the catalog read again, and every identity
    /// provider's JWKS fetched again now (in the background), so that a key
    /// the provider withdrew stops verifying without waiting for the next
    /// refresh (docs/SIGN-IN.md).
    /// Each part says what it did, also when nothing changed: an operator who sent the
    /// signal sees that it arrived.
    public func reload() {
        if let jwt = database.jwt {
            jwt.refetchKeys()
            logger.notice("reload: fetching the identity providers' keys again")
        }
        let changed = Self.reload(schema, pool: pool, schemaName: configuration.database.schema, logger: logger)
        if changed == false {
            logger.notice(
                "reload: the tables are as they were", metadata: ["resources": "\(schema.catalog.names.joined(separator: ","))"])
        }
    }

    /// Reads the catalog again: true when it changed (and was replaced), false when it is
    /// the same, nil when it could not be read (the previous one is kept).
    @discardableResult
    static func reload(_ schema: SchemaCache, pool: PostgresPool, schemaName: String, logger: Logger) -> Bool? {
        do {
            let catalog = try Self.loadCatalog(pool: pool, schema: schemaName, logger: logger)
            guard schema.replace(with: catalog) else { return false }
            logger.notice("schema reloaded", metadata: ["resources": "\(catalog.names.joined(separator: ","))"])
            return true
        } catch {
            logger.error("schema reload failed; keeping the previous catalog", metadata: ["error": "\(error)"])
            return nil
        }
    }

    static func loadCatalog(pool: PostgresPool, schema: String, logger: Logger) throws -> SchemaCatalog {
        let catalog = try pool.withConnection { try SchemaIntrospector.load(schema: schema, connection: $0) }
        for name in catalog.skipped {
            logger.warning("table \(schema).\(name) is sync-enabled but collides with a Ferry route; it is not exposed")
        }
        return catalog
    }

    public func router() -> Router {
        var router = Router(refusal: Problem.refusal)
        let handle = RouteHandling(logger: logger)
        router.get(ProbeRoute.health, inline: true) { _, _ in .json(Array(#"{"status":"ok"}"#.utf8)) }
        ReadinessRoute(database: database, memcached: memcached, feedHold: feedHold).register(on: &router)
        AuthRoutes(
            auth: AuthService(database: database, tokenTTLSeconds: configuration.auth.tokenTTLSeconds),
            allowSignup: configuration.auth.allowSignup, builtinTokens: configuration.auth.builtinTokens
        )
        .register(on: &router, handle: handle)
        UserLookupRoute(database: database).register(on: &router, handle: handle)
        CatalogRoutes(
            database: database, schema: schema, schemaName: configuration.database.schema,
            maxWaitStreams: configuration.live.maxWaitStreams
        )
        .register(on: &router, handle: handle)
        ChangesRoutes(database: database, schema: schema, schemaName: configuration.database.schema, live: live)
            .register(on: &router, handle: handle)
        // The key check outermost, so that a replay does no work.
        let writes = handle.with([
            IdempotentWrites(database: database, ttlHours: configuration.idempotency.ttlHours),
            RankRewriter(database: database, schema: schema),
        ])
        ResourceRoutes(database: database, schema: schema, configuration: configuration, paging: paging).register(on: &router, handle: writes)
        BatchRoute(
            database: database, operations: router, maxOperations: configuration.limits.maxBatchOperations,
            maxPathBytes: configuration.limits.maxRequestLineBytes
        )
        .register(on: &router, handle: writes)
        if configuration.console.enabled {
            ConsoleRoutes(
                console: ConsoleDatabase(database: database), schema: schema, configuration: configuration,
                operations: router, paging: paging, metrics: metrics, memcached: memcached, pool: pool, live: live,
                logger: logger
            )
            .register(on: &router, handle: handle)
        }
        return router
    }

    /// The HTTP server settings from the configuration.
    public var serverConfiguration: HTTPServerConfiguration {
        let l = configuration.limits
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = l.maxRequestLineBytes
        limits.maxHeaderBytes = l.maxHeaderBytes
        limits.maxHeaderCount = l.maxHeaderCount
        limits.maxBodyBytes = l.maxBodyBytes
        limits.headerTimeoutSeconds = l.headerTimeoutSeconds
        limits.idleTimeoutSeconds = l.idleTimeoutSeconds
        limits.bodyTimeoutSeconds = l.bodyTimeoutSeconds
        limits.minBodyBytesPerSecond = l.minBodyBytesPerSecond
        limits.writeTimeoutSeconds = l.writeTimeoutSeconds
        limits.maxConnections = l.maxConnections
        limits.shutdownGraceSeconds = l.shutdownGraceSeconds
        let listen = configuration.listen
        var server = HTTPServerConfiguration(
            host: listen.host, port: listen.port, limits: limits,
            ioThreads: listen.ioThreads > 0 ? listen.ioThreads : HTTPServerConfiguration.coreCount,
            workerThreads: listen.workerThreads,
            // RequestObserver writes the request line, with the user id and route pattern.
            accessLog: false,
            compression: HTTPCompression(level: configuration.compression.level, minimumBytes: configuration.compression.minBytes),
            serverName: "ferry", threadNamePrefix: "ferry", refusal: Problem.refusal
        )
        // Issue 51: requests whose token this process has verified already go first,
        // so a flood of tokens refused anyway cannot queue in front of them.
        server.urgent = { [database] request in
            let credential = BearerToken.credential(request)
            // The worker reads it from there instead of hashing the token again.
            request.learned = BearerToken.Learned(credential: credential)
            return database.holdsVerified(credential)
        }
        return server
    }

    /// Stops listening, stops the JWT key refreshes and closes the pool's connections.
    public func close() {
        live.stop()
        database.jwt?.stop()
        pool.close()
    }
}
