import Glibc

/// Where and how an `HTTPServer` listens and how many threads it uses.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind: `127.0.0.1`, `0.0.0.0`, `::` (IPv6 and IPv4), `::1` or `localhost`.
    public var host: String
    /// The TCP port; 0 picks a free one (read it from `HTTPServer.port`).
    public var port: Int
    /// Size and time limits.
    public var limits: HTTPLimits
    /// Event-loop threads doing socket I/O, parsing and serialization; default: one per core.
    public var ioThreads: Int
    /// Threads running handlers that may block (database calls); at most this many run at once.
    public var workerThreads: Int
    /// The listen(2) backlog.
    public var backlog: Int32
    /// Whether to write one access-log line per request at `.info`.
    public var accessLog: Bool
    /// Response compression; coded request bodies are decoded regardless.
    public var compression: HTTPCompression
    /// The `Server` field of every response; none when nil.
    public var serverName: String?
    /// The prefix of the server's thread names (`<prefix>-io-0`, `<prefix>-worker-0`),
    /// as `top` and `perf` show them; at most 8 bytes survive Linux's 15-byte limit.
    public var threadNamePrefix: String
    /// How a refusal the server itself makes (malformed request, timeout,
    /// connection cap) becomes a response.
    public var refusal: HTTPRefusal

    /// A configuration; the defaults suit production on a small machine.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, limits: HTTPLimits = HTTPLimits(),
        ioThreads: Int = HTTPServerConfiguration.coreCount, workerThreads: Int = HTTPServerConfiguration.defaultWorkerThreads,
        backlog: Int32 = 1024, accessLog: Bool = true, compression: HTTPCompression = HTTPCompression(),
        serverName: String? = nil, threadNamePrefix: String = "http",
        refusal: @escaping HTTPRefusal = { HTTPResponse.problem($0) }
    ) {
        self.host = host
        self.port = port
        self.limits = limits
        self.ioThreads = max(1, ioThreads)
        self.workerThreads = max(1, workerThreads)
        self.backlog = backlog
        self.accessLog = accessLog
        self.compression = compression
        self.serverName = serverName
        self.threadNamePrefix = threadNamePrefix
        self.refusal = refusal
    }

    /// Handler threads unless said otherwise: enough for a pool of 16 database
    /// connections with handlers waiting on other work besides.
    public static let defaultWorkerThreads = 32

    /// The number of online processors.
    public static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
