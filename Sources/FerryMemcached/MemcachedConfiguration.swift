/// How a `MemcachedClient` reaches its servers and how long it may wait for them.
///
/// Every limit is chosen so that a dead or hung memcached costs a caller a bounded,
/// small amount of time: a cache must never be slower than the work it saves.
public struct MemcachedConfiguration: Sendable {
    /// The servers, each as `"host:port"` (`"[::1]:11211"` for IPv6 literals).
    /// Keys are spread over them by consistent (ketama) hashing, so adding a server
    /// moves only about `1/(n+1)` of the keys.
    public var servers: [String]
    /// How long a TCP connect may take before the server counts as failed.
    public var connectTimeoutMs: Int = 100
    /// How long one send or receive may wait for the socket (libmemcached's poll timeout;
    /// also used as `SO_SNDTIMEO`/`SO_RCVTIMEO`), and how long a call may wait for a
    /// free connection from the pool.
    public var pollTimeoutMs: Int = 100
    /// After a server failed to connect, it is left alone (and, with several servers,
    /// its keys go to the others) for this many seconds before it is tried again.
    public var retryTimeoutSeconds: Int = 2
    /// The number of connection sets (one `memcached_st` each) shared by all threads;
    /// at most this many calls run at once.
    public var poolSize: Int = 8

    /// A configuration for `servers` with the documented defaults.
    public init(
        servers: [String],
        connectTimeoutMs: Int = 100,
        pollTimeoutMs: Int = 100,
        retryTimeoutSeconds: Int = 2,
        poolSize: Int = 8
    ) {
        self.servers = servers
        self.connectTimeoutMs = connectTimeoutMs
        self.pollTimeoutMs = pollTimeoutMs
        self.retryTimeoutSeconds = retryTimeoutSeconds
        self.poolSize = poolSize
    }

    /// Parses a comma-separated list such as `"127.0.0.1:11211,127.0.0.1:11212"`
    /// (the form environment variables use) into a configuration with defaults.
    public init(serverList: String) {
        self.init(
            servers: serverList.split(separator: ",").map {
                $0.trimmed()
            })
    }
}

extension Substring {
    fileprivate func trimmed() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
