import CLibMemcached

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread-safe memcached client over libmemcached, for any number of servers.
///
/// - Keys are spread over the servers with MD5 ketama, so adding a server moves only
///   about `1/(n+1)` of them.
/// - A server that refuses or times out a connect is *ejected*: for
///   `retryTimeoutSeconds` its keys are routed to the other servers, then it is tried
///   again (and taken back once it answers). A call that meets a freshly failed server
///   is retried on the new route (see `maxAttempts`), so while one server is alive
///   calls keep working. With a single server, calls fail fast with `.unavailable` until it
///   is back.
/// - A server that accepts connections but never answers (hung, `SIGSTOP`) costs a call
///   about `pollTimeoutMs` and yields `.unavailable`; it is not ejected, because
///   libmemcached only counts failed connects.
/// - Values may reappear from a server that comes back with its old data after its keys
///   were rerouted; this client is meant for write-once values (such as snapshots under
///   random keys) whose callers treat a missing part as "gone".
public final class MemcachedClient: Sendable {
    public let configuration: MemcachedConfiguration
    let addresses: [MemcachedServerAddress]
    let pool: MemcachedHandlePool

    /// How often a call is attempted while libmemcached discovers a dead server. The
    /// worst case needs all four: the pooled connection turns out closed, the reconnect
    /// is refused (server marked failed), the next attempt ejects it, the last one goes
    /// to the server the key is rerouted to. Only the reconnect can take time, and a
    /// connect timeout is not retried, so this stays within about `connectTimeoutMs`.
    static let maxAttempts = 4

    /// Checks the configuration and prepares `poolSize` connection sets. Connects lazily:
    /// a server that is down now does not make this fail.
    public init(configuration: MemcachedConfiguration) throws(MemcachedError) {
        guard !configuration.servers.isEmpty else {
            throw MemcachedError(kind: .invalidArgument, message: "no memcached servers configured")
        }
        for (name, value) in [
            ("connectTimeoutMs", configuration.connectTimeoutMs),
            ("pollTimeoutMs", configuration.pollTimeoutMs),
            ("retryTimeoutSeconds", configuration.retryTimeoutSeconds),
            ("poolSize", configuration.poolSize),
        ] where value < 1 || value > 3_600_000 {
            throw MemcachedError(kind: .invalidArgument, message: "\(name) must be 1...3600000, got \(value)")
        }
        var addresses: [MemcachedServerAddress] = []
        for server in configuration.servers {
            addresses.append(try MemcachedServerAddress(parsing: server))
        }
        self.configuration = configuration
        self.addresses = addresses
        self.pool = try MemcachedHandlePool(size: configuration.poolSize, waitMs: configuration.pollTimeoutMs) {
            () throws(MemcachedError) -> MemcachedHandle in
            try MemcachedHandle(configuration: configuration, addresses: addresses)
        }
    }

    /// The value stored under `key`, or `nil` when there is none (a miss is not an error).
    public func get(_ key: String) throws(MemcachedError) -> [UInt8]? {
        try MemcachedKey.validate(key)
        return try perform("get") { handle throws(MemcachedError) -> [UInt8]? in
            var length = 0
            var flags: UInt32 = 0
            var rc = MEMCACHED_SUCCESS
            let value = memcached_get(handle.raw, key, key.utf8.count, &length, &flags, &rc)
            if let value {
                defer { Glibc.free(value) }
                return value.withMemoryRebound(to: UInt8.self, capacity: length) {
                    Array(UnsafeBufferPointer(start: $0, count: length))
                }
            }
            if rc == MEMCACHED_SUCCESS { return [] }
            guard rc == MEMCACHED_NOTFOUND || rc == MEMCACHED_END else {
                throw MemcachedError(rc, handle: handle.raw, context: "get")
            }
            // libmemcached reports a read timeout during the fetch as a plain miss; the
            // handle's last error tells the two apart.
            try Self.throwLastError(of: handle, context: "get")
            return nil
        }
    }

    /// Stores `value` under `key` for `ttlSeconds` (1...2592000; 0 means "until evicted").
    /// Throws `.tooLarge` when the server refuses the size.
    public func set(_ key: String, _ value: [UInt8], ttlSeconds: Int) throws(MemcachedError) {
        try MemcachedKey.validate(key)
        guard (0...Self.maxRelativeTTL).contains(ttlSeconds) else {
            throw MemcachedError(
                kind: .invalidArgument,
                message: "ttlSeconds must be 0...\(Self.maxRelativeTTL) (memcached reads larger values as a date), got \(ttlSeconds)")
        }
        try perform("set") { handle throws(MemcachedError) in
            let rc: memcached_return_t
            if value.isEmpty {
                // libmemcached wants a non-null pointer even for an empty value.
                rc = memcached_set(handle.raw, key, key.utf8.count, "", 0, time_t(ttlSeconds), 0)
            } else {
                rc = value.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { chars in
                        memcached_set(
                            handle.raw, key, key.utf8.count, chars.baseAddress, chars.count,
                            time_t(ttlSeconds), 0)
                    }
                }
            }
            guard rc == MEMCACHED_SUCCESS else {
                throw MemcachedError(rc, handle: handle.raw, context: "set (\(value.count) bytes)")
            }
        }
    }

    /// Deletes `key`; `false` when it was not there. After a reroute (see the type's
    /// documentation) `false` may also mean it was deleted by an earlier attempt.
    public func delete(_ key: String) throws(MemcachedError) -> Bool {
        try MemcachedKey.validate(key)
        return try perform("delete") { handle throws(MemcachedError) -> Bool in
            let rc = memcached_delete(handle.raw, key, key.utf8.count, 0)
            if rc == MEMCACHED_SUCCESS || rc == MEMCACHED_DELETED { return true }
            if rc == MEMCACHED_NOTFOUND { return false }
            throw MemcachedError(rc, handle: handle.raw, context: "delete")
        }
    }

    /// The server (`"host:port"`) that `key` currently maps to in one pooled connection
    /// set. Does no I/O. Handles learn about dead servers separately, so right after a
    /// failure two handles may briefly disagree.
    public func server(forKey key: String) throws(MemcachedError) -> String {
        try MemcachedKey.validate(key)
        return try pool.withHandle { handle throws(MemcachedError) -> String in
            var rc = MEMCACHED_SUCCESS
            guard let instance = memcached_server_by_key(handle.raw, key, key.utf8.count, &rc),
                rc == MEMCACHED_SUCCESS
            else { throw MemcachedError(rc, handle: handle.raw, context: "server_by_key") }
            let host = String(cString: memcached_server_name(instance))
            let port = memcached_server_port(instance)
            return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// memcached treats an expiration above 30 days as a Unix time.
    static let maxRelativeTTL = 2_592_000
}
