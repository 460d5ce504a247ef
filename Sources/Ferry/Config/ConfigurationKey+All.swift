extension ConfigurationKey {
    /// Every key Ferry accepts, in the order the reference lists them.
    public static let all: [ConfigurationKey] = [
        .string("listen.host", \.listen.host, "Address to bind: 127.0.0.1, 0.0.0.0, :: or ::1."),
        .int("listen.port", \.listen.port, min: 0, max: 65_535, "TCP port; 0 picks a free one."),
        .int("listen.io_threads", \.listen.ioThreads, min: 0, max: 256, "I/O event loops; 0 means one per core."),
        .int(
            "listen.worker_threads", \.listen.workerThreads, min: 1, max: 1_024,
            "Threads that run handlers (blocking database work)."),

        .string("database.url", \.database.url, "URL or conninfo of the RLS-subject role that serves requests."),
        .string(
            "database.migration_url", \.database.migrationURL,
            "URL or conninfo of the owner role that runs `ferry migrate` and `ferry purge`."),
        .string("database.schema", \.database.schema, "Schema whose sync-enabled tables become resources."),
        .string(
            "database.migrations_dir", \.database.migrationsDir, allowEmpty: true,
            "The app's migrations directory: `ferry migrate` applies Ferry's own, built in, then these; empty: Ferry's own only. Relative to the configuration file (to the working directory when set by the environment); `--dir` overrides it."
        ),
        .int("database.pool_size", \.database.poolSize, min: 1, max: 1_000, "Connections in the serve pool."),
        .int(
            "database.acquire_timeout_ms", \.database.acquireTimeoutMs, min: 1, max: 600_000,
            "How long a request waits for a pooled connection before it gets 503."),
        .int(
            "database.statement_timeout_ms", \.database.statementTimeoutMs, min: 0, max: 3_600_000,
            "statement_timeout of each serve connection; 0 disables it."),
        .int(
            "database.answer_timeout_ms", \.database.answerTimeoutMs, min: 0, max: 7_200_000,
            "How long a connection of `ferry serve` waits for each answer from PostgreSQL before it gives the server up as frozen or unreachable (the request gets 503, the connection is replaced); 0 waits without limit. Raised to database.statement_timeout_ms + 5 s when that is longer."
        ),
        .bool(
            "database.prepared_statements", \.database.preparedStatements,
            "Use named prepared statements with generic plans (turn off behind PgBouncer < 1.21 in transaction mode)."),
        .bool(
            "database.jit", \.database.jit,
            "Let PostgreSQL JIT-compile Ferry's statements (off: sync pages would pay compilation on every request)."),
        .string(
            "database.schema_check", \.database.schemaCheck, oneOf: ["warn", "refuse", "off"],
            "What `ferry serve` does with `ferry check`'s findings at start: warn logs each one (and exits 1 only when Row Level Security does not hold the serve role: every user would read every row); refuse also exits 1 on any error (a leak, a write that always fails); off skips the check."
        ),

        .list(
            "memcached.servers", \.memcached.servers, allowEmpty: false,
            "host:port of each memcached; keys spread by ketama consistent hashing. Environment: comma-separated."),
        .int("memcached.connect_timeout_ms", \.memcached.connectTimeoutMs, min: 1, max: 60_000, "Connect timeout."),
        .int("memcached.poll_timeout_ms", \.memcached.pollTimeoutMs, min: 1, max: 60_000, "Send/receive timeout."),
        .int(
            "memcached.retry_timeout_seconds", \.memcached.retryTimeoutSeconds, min: 0, max: 3_600,
            "A failed server is retried after this."),
        .int("memcached.pool_size", \.memcached.poolSize, min: 1, max: 1_000, "memcached client handles."),

        .int("limits.max_body_bytes", \.limits.maxBodyBytes, min: 1, "Largest request body (413 beyond)."),
        .int("limits.max_request_line_bytes", \.limits.maxRequestLineBytes, min: 64, "Longest request line (414)."),
        .int("limits.max_header_bytes", \.limits.maxHeaderBytes, min: 256, "Largest header section (431)."),
        .int("limits.max_header_count", \.limits.maxHeaderCount, min: 1, "Most header fields (431)."),
        .seconds(
            "limits.header_timeout_seconds", \.limits.headerTimeoutSeconds,
            "Time for a whole header section to arrive (slowloris defence)."),
        .seconds("limits.idle_timeout_seconds", \.limits.idleTimeoutSeconds, "Idle keep-alive connections close after this."),
        .seconds("limits.body_timeout_seconds", \.limits.bodyTimeoutSeconds, "A stalled body read is cut off after this."),
        .int(
            "limits.body_min_bytes_per_second", \.limits.minBodyBytesPerSecond, min: 0,
            "After body_timeout_seconds, a body slower than this on average is cut off (408); 0: only stalls are."),
        .seconds("limits.write_timeout_seconds", \.limits.writeTimeoutSeconds, "A stalled response write is cut off after this."),
        .int("limits.max_connections", \.limits.maxConnections, min: 1, "Most open connections (503 beyond)."),
        .seconds(
            "limits.shutdown_grace_seconds", \.limits.shutdownGraceSeconds,
            "Time in-flight requests get to finish on SIGTERM/SIGINT."),
        .int(
            "limits.max_bulk_items", \.limits.maxBulkItems, min: 1, max: 100_000,
            "Most items in one bulk create, update or delete (422 too_many_items beyond)."),
        .int(
            "limits.max_batch_operations", \.limits.maxBatchOperations, min: 1, max: 10_000,
            "Most operations in one POST /v1/batch."),

        .int("paging.default_limit", \.paging.defaultLimit, min: 1, max: 100_000, "Page size without ?limit=."),
        .int("paging.max_limit", \.paging.maxLimit, min: 1, max: 100_000, "Largest accepted ?limit=."),
        .int(
            "paging.token_ttl_seconds", \.paging.tokenTTLSeconds, min: 1, max: 30 * 86_400,
            "Lifetime of a paging snapshot in memcached."),

        .int("auth.token_ttl_seconds", \.auth.tokenTTLSeconds, min: 60, max: 366 * 86_400, "Lifetime of an issued token."),
        .bool("auth.allow_signup", \.auth.allowSignup, "Whether POST /v1/users (sign-up) exists."),
        .int(
            "auth.token_cache_seconds", \.auth.tokenCacheSeconds, min: 0, max: 300,
            "How long a checked token is trusted without a lookup (0: never); revocations elsewhere take up to this long."),
        .bool(
            "auth.builtin_tokens", \.auth.builtinTokens,
            "Whether Ferry's own users and tokens are accepted; false leaves JWTs alone and POST /v1/auth/token answers 404."),
        .providers(
            "auth.jwt_providers", \.auth.jwtProviders,
            "Identity providers whose JWTs are accepted: objects with issuer, audience, and jwks_url, jwks_file, jwks or secret (docs/SIGN-IN.md)."),
        .int(
            "auth.jwt_leeway_seconds", \.auth.jwtLeewaySeconds, min: 0, max: 600,
            "Clock skew tolerated on a JWT's exp, nbf and iat."),
        .int(
            "auth.jwks_refresh_seconds", \.auth.jwksRefreshSeconds, min: 1, max: 86_400,
            "How often each provider's JWKS is fetched again in the background."),
        .int(
            "auth.jwks_grace_seconds", \.auth.jwksGraceSeconds, min: 0, max: 30 * 86_400,
            "How long past a failed refresh the keys held keep serving; then their tokens get 503 jwks_unavailable."),
        .int(
            "auth.jwks_min_refetch_seconds", \.auth.jwksMinRefetchSeconds, min: 0, max: 3_600,
            "A token with an unknown kid starts a fetch of the JWKS at most once per this interval; while a fetch runs, such a token's request waits for it, parked (at most the fetch timeout, never over 10 s)."
        ),
        .int(
            "auth.jwks_fetch_timeout_seconds", \.auth.jwksFetchTimeoutSeconds, min: 1, max: 120,
            "How long one JWKS fetch may take; start-up waits at most this long (plus a second) for all providers' keys, fetched at once, and a request with an unknown kid at most this long (never over 10 s)."
        ),

        .int(
            "tombstones.retention_days", \.tombstones.retentionDays, min: 1, max: 36_500,
            "Tombstones older than this are purged; older change cursors get 410."),
        .int(
            "tombstones.purge_interval_seconds", \.tombstones.purgeIntervalSeconds, min: 0, max: 86_400 * 7,
            "How often the server purges; 0 disables the in-server purge."),

        .int(
            "idempotency.ttl_hours", \.idempotency.ttlHours, min: 1, max: 24 * 30,
            "How long a completed response is kept for Idempotency-Key replays."),

        .string(
            "logging.level", \.logging.level,
            oneOf: ["trace", "debug", "info", "notice", "warning", "error", "critical"],
            "Least severe level logged; every request writes one line at info, health probes (/healthz, /readyz) at debug; "
                + "one the server refused before it was whole (400, 408, 413, 414, 431) writes `request refused`, with its "
                + "`request_id`, `remote`, `status` and `reason`."),
        .string("logging.format", \.logging.format, oneOf: ["text", "json"], "Log line format."),

        .list(
            "cors.allowed_origins", \.cors.allowedOrigins, allowEmpty: true,
            "Origins allowed to call the API from a browser; none by default. Environment: comma-separated."),

        .int(
            "compression.level", \.compression.level, min: 0, max: 9,
            "zlib level of gzip/deflate answers to clients whose Accept-Encoding allows it: 1 fastest, 9 smallest; 0 off."),
        .int(
            "compression.min_bytes", \.compression.minBytes, min: 0,
            "Smallest JSON answer compressed; streamed answers always are."),

        .int(
            "live.max_wait_seconds", \.live.maxWaitSeconds, min: 1, max: 3_600,
            "Longest a long poll (GET /v1/changes?wait=) is held; a longer wait is held this long. Keep it under the proxy's read timeout."),
        .int(
            "live.max_waiters", \.live.maxWaiters, min: 1,
            "Long polls and event streams one instance holds at once (503 with Retry-After beyond)."),
        .int(
            "live.max_waiters_per_user", \.live.maxWaitersPerUser, min: 1,
            "Long polls and event streams one user may hold on one instance (429 too_many_waiters beyond)."),
        .int(
            "live.max_wait_streams", \.live.maxWaitStreams, min: 1, max: 10_000,
            "Streams (the default one and subscriptions) one POST /v1/changes/wait may wait on at once (400 beyond)."),
        .seconds(
            "live.heartbeat_seconds", \.live.heartbeatSeconds,
            "A quiet event stream sends a comment this often, so that proxies keep it open."),
        .seconds(
            "live.max_stream_seconds", \.live.maxStreamSeconds,
            "An event stream ends after this long; the client reconnects with Last-Event-ID (and may reach another instance)."),
        .seconds(
            "live.fallback_check_seconds", \.live.fallbackCheckSeconds,
            "While the LISTEN connection is down, every waiter checks the feed this often."),
        .string(
            "live.listen_url", \.live.listenURL, allowEmpty: true,
            "URL or conninfo of the instance's one LISTEN connection, and of its hint sender (the NOTIFY of its writes to the other instances, core 0028); empty: database.url. It must reach PostgreSQL itself: PgBouncer in transaction mode cannot LISTEN. Leave `application_name` out of it: instances find each other's listeners by the name Ferry gives them (`ferry-listen`), and a lone instance sends no NOTIFY; with another name every instance sends always (docs/OPERATIONS.md)."
        ),
        .seconds(
            "live.max_feed_hold_seconds", \.live.maxFeedHoldSeconds,
            "A changes feed held back longer than this by one transaction is reported: /readyz names it (still 200) and ferry_feed_hold_over_limit is 1."
        ),
        .int(
            "live.public_page_max_age_seconds", \.live.publicPageMaxAgeSeconds, min: 1, max: 3_600,
            "How long a shared cache (nginx, a CDN) may answer a public stream's page to every device (Cache-Control: public, max-age): the most a device polling it sees a commit late."
        ),
        .bool(
            "console.enabled", \.console.enabled,
            "Serve the operator's console at /console and record refused requests for it."),
        .int(
            "console.token_ttl_seconds", \.console.tokenTTLSeconds, min: 60, max: 7 * 86_400,
            "Lifetime of a console token (an operator's sign-in)."),
    ]
}
