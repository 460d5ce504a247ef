import FerryMemcached

extension FerryApp {
    /// The client settings from `memcached.*`. A retry timeout of 0 becomes 1 s: the
    /// client needs some backoff before it tries a dead server again.
    static func memcachedConfiguration(_ settings: FerryConfiguration.Memcached) -> MemcachedConfiguration {
        MemcachedConfiguration(
            servers: settings.servers, connectTimeoutMs: settings.connectTimeoutMs,
            pollTimeoutMs: settings.pollTimeoutMs, retryTimeoutSeconds: max(1, settings.retryTimeoutSeconds),
            poolSize: settings.poolSize)
    }
}
