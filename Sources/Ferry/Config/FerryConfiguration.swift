import FerryHTTP

/// Everything `ferry serve` can be told, with the documented defaults.
///
/// Loaded from JSON by ``ConfigurationLoader``; every key is listed, with its
/// default and meaning, in ``ConfigurationKey/all``, which is also the source
/// of docs/CONFIGURATION.md's reference.
public struct FerryConfiguration: Sendable, Equatable {
    /// Where the HTTP server listens.
    public struct Listen: Sendable, Equatable {
        /// Address to bind: `127.0.0.1`, `0.0.0.0`, `::` or `::1`.
        public var host = "127.0.0.1"
        /// TCP port; 0 picks a free one.
        public var port = 8080
        /// I/O event loops; 0 means one per core.
        public var ioThreads = 0
        /// Threads that run handlers (blocking database work); the HTTP layer's default.
        public var workerThreads = HTTPServerConfiguration.defaultWorkerThreads
    }

    /// PostgreSQL connection settings: the `database` section.
    public struct Postgres: Sendable, Equatable {
        /// URL or conninfo of the RLS-subject role that serves requests.
        public var url = "postgresql://ferry_app@127.0.0.1:5432/ferry"
        /// URL or conninfo of the owner role that runs migrations and purges.
        public var migrationURL = "postgresql://ferry_owner@127.0.0.1:5432/ferry"
        /// The schema whose sync-enabled tables become resources.
        public var schema = "app"
        /// The app's migrations directory, applied by `ferry migrate` after Ferry's own
        /// (built in); empty applies Ferry's own only.
        public var migrationsDir = ""
        /// Connections in the serve pool.
        public var poolSize = 16
        /// How long a request waits for a pooled connection before 503.
        public var acquireTimeoutMs = 2_000
        /// `statement_timeout` for each serve connection; 0 disables it.
        public var statementTimeoutMs = 10_000
        /// How long a connection of `ferry serve` waits for each of PostgreSQL's answers
        /// before giving the server up as frozen or cut off (TCP still up, nothing said);
        /// 0 waits without limit.
        public var answerTimeoutMs = 15_000
        /// `answerTimeoutMs` as the connections take it, raised to 5 s past a longer
        /// `statementTimeoutMs`, so that the server always ends a slow statement first (and
        /// a configuration written before the key still starts); nil for no limit.
        public var answerTimeout: Duration? {
            guard answerTimeoutMs > 0 else { return nil }
            return .milliseconds(max(answerTimeoutMs, statementTimeoutMs > 0 ? statementTimeoutMs + 5_000 : 0))
        }
        /// Whether to use named prepared statements, planned once (generic plans).
        /// On by default: bench/api/api.sh measured much higher GET and PATCH throughput (bench/api/README.md).
        /// Turn off behind PgBouncer older than 1.21 in transaction mode (or with
        /// `max_prepared_statements = 0`), which cannot carry named statements.
        public var preparedStatements = true
        /// Whether PostgreSQL may JIT-compile Ferry's statements. Off by default:
        /// a sync page's plan is estimated above PostgreSQL's JIT thresholds at
        /// any table size, and compiling it (hundreds of functions) is
        /// repeated per execution, always far more than the statement itself
        /// costs (bench/feed/README.md, "JIT").
        public var jit = false
        /// What `ferry serve` does with `ferry check`'s findings at start: `warn` logs
        /// each one; `refuse` also exits when one is an error; `off` checks nothing.
        /// `warn` by default: an upgrade that adds a check, or a hand edit, must not
        /// stop a server that was serving (docs/GUIDE.md, "Checking the schema").
        public var schemaCheck = "warn"
    }

    /// memcached settings (paging snapshots).
    public struct Memcached: Sendable, Equatable {
        /// `host:port` of each server; keys spread by ketama consistent hashing.
        public var servers = ["127.0.0.1:11211"]
        /// Connect timeout per server.
        public var connectTimeoutMs = 100
        /// Send/receive poll timeout.
        public var pollTimeoutMs = 100
        /// How long a failed server is left alone before it is tried again.
        public var retryTimeoutSeconds = 2
        /// Client handles in the pool.
        public var poolSize = 16
    }

    /// Size, time and count limits. The HTTP ones default to the HTTP layer's own
    /// (`HTTPLimits`), so that the two never disagree.
    public struct Limits: Sendable, Equatable {
        private static let http = HTTPLimits()

        /// Largest request body, after de-chunking.
        public var maxBodyBytes = Self.http.maxBodyBytes
        /// Longest request line, CRLF excluded; longer answers 414.
        public var maxRequestLineBytes = Self.http.maxRequestLineBytes
        /// Largest header section (request line excluded); larger answers 431.
        public var maxHeaderBytes = Self.http.maxHeaderBytes
        /// Most header fields (trailers included); more answers 431.
        public var maxHeaderCount = Self.http.maxHeaderCount
        /// Time for a whole header section to arrive.
        public var headerTimeoutSeconds = Self.http.headerTimeoutSeconds
        /// Idle keep-alive connections close after this.
        public var idleTimeoutSeconds = Self.http.idleTimeoutSeconds
        /// A body read stalled this long is cut off.
        public var bodyTimeoutSeconds = Self.http.bodyTimeoutSeconds
        /// A body slower than this, after its first bodyTimeoutSeconds, is cut off (0: never).
        public var minBodyBytesPerSecond = Self.http.minBodyBytesPerSecond
        /// A response write stalled this long is cut off.
        public var writeTimeoutSeconds = Self.http.writeTimeoutSeconds
        /// Most open client connections.
        public var maxConnections = Self.http.maxConnections
        /// Time in-flight requests get to finish on SIGTERM.
        public var shutdownGraceSeconds = Self.http.shutdownGraceSeconds
        /// Most items in one bulk create, update or delete.
        public var maxBulkItems = 1_000
        /// Most operations in one batch.
        public var maxBatchOperations = 100
    }

    /// Index paging.
    public struct Paging: Sendable, Equatable {
        /// Page size when `?limit=` is absent.
        public var defaultLimit = 100
        /// Largest accepted `?limit=`.
        public var maxLimit = 1_000
        /// Lifetime of a paging snapshot.
        public var tokenTTLSeconds = 300
    }

    /// Bearer tokens and sign-up.
    public struct Auth: Sendable, Equatable {
        /// Lifetime of an issued token.
        public var tokenTTLSeconds = 30 * 24 * 3600
        /// Whether `POST /v1/users` (sign-up) exists.
        public var allowSignup = false
        /// How long a successful token check stands in for the database's in this
        /// process (0: every request looks its token up). A token revoked other than
        /// through this process is still accepted here for up to this long.
        public var tokenCacheSeconds = 1
        /// Whether Ferry's own users and tokens are accepted (`POST /v1/auth/token`, sign-up, `ferry token issue`).
        public var builtinTokens = true
        /// The identity providers whose JWTs are accepted; none by default.
        public var jwtProviders: [JWTProvider] = []
        /// Clock skew tolerated on a JWT's `exp`, `nbf` and `iat`.
        public var jwtLeewaySeconds = 60
        /// How often a provider's JWKS is fetched again in the background.
        public var jwksRefreshSeconds = 600
        /// How long past a failed refresh the keys held keep serving.
        public var jwksGraceSeconds = 86_400
        /// An unknown `kid` fetches the JWKS again at most once per this many seconds.
        public var jwksMinRefetchSeconds = 30
        /// How long one JWKS fetch may take; start-up waits at most this (plus a second) for all of them.
        public var jwksFetchTimeoutSeconds = 5

        /// The JWKS timing these keys set.
        public var keyTiming: KeyTiming {
            KeyTiming(
                refresh: .seconds(jwksRefreshSeconds), grace: .seconds(jwksGraceSeconds), minRefetch: .seconds(jwksMinRefetchSeconds),
                fetchTimeout: .seconds(jwksFetchTimeoutSeconds))
        }
    }

    /// Tombstone retention.
    public struct Tombstones: Sendable, Equatable {
        /// Tombstones older than this are purged.
        public var retentionDays = 30
        /// How often the server purges; 0 disables the in-server purge.
        public var purgeIntervalSeconds = 3_600
    }

    /// Idempotency keys.
    public struct Idempotency: Sendable, Equatable {
        /// How long a completed response is kept for replay.
        public var ttlHours = 24
    }

    public struct Logging: Sendable, Equatable {
        /// trace, debug, info, notice, warning, error or critical.
        public var level = "info"
        /// `text` or `json`.
        public var format = "text"
    }

    /// Cross-origin requests from browser apps.
    public struct CORS: Sendable, Equatable {
        /// Origins allowed to call the API; none by default.
        public var allowedOrigins: [String] = []
    }

    /// Response compression.
    public struct Compression: Sendable, Equatable {
        /// zlib level 1-9; 0 turns response compression off.
        public var level = 1
        /// Smallest in-memory JSON answer that is compressed.
        public var minBytes = 1024
    }

    /// The live changes feed: long polls and event streams on GET /v1/changes.
    public struct Live: Sendable, Equatable {
        /// The longest a long poll is held (seconds); a longer `wait` is held this long.
        public var maxWaitSeconds = 30
        /// Long polls and event streams one instance holds at once.
        public var maxWaiters = 10_000
        /// Of them, per user.
        public var maxWaitersPerUser = 16
        /// Streams one `POST /v1/changes/wait` may wait on.
        public var maxWaitStreams = 100
        /// A quiet event stream sends a comment this often.
        public var heartbeatSeconds = 15.0
        /// An event stream ends after this long.
        public var maxStreamSeconds = 600.0
        /// While the LISTEN connection is down, waiters check the feed this often.
        public var fallbackCheckSeconds = 2.0
        /// Where the LISTEN connection goes; empty: database.url.
        public var listenURL = ""
        /// A feed held back longer than this (seconds) is reported by `/readyz` and `/metrics`.
        public var maxFeedHoldSeconds = 300.0
        /// How long a shared cache may answer a public stream's page (`Cache-Control: public, max-age`).
        public var publicPageMaxAgeSeconds = 1
    }

    /// The operator's console at `/console` (docs/CONSOLE.md).
    public struct Console: Sendable, Equatable {
        /// Whether `ferry serve` serves it (and records refused requests for it).
        public var enabled = true
        /// Lifetime of a console token.
        public var tokenTTLSeconds = 8 * 3600
    }

    public var listen = Listen()
    public var database = Postgres()
    public var memcached = Memcached()
    public var limits = Limits()
    public var paging = Paging()
    public var auth = Auth()
    public var tombstones = Tombstones()
    public var idempotency = Idempotency()
    public var logging = Logging()
    public var cors = CORS()
    public var compression = Compression()
    public var live = Live()
    public var console = Console()

    /// The defaults.
    public init() {}
}
