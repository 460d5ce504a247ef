import CLibMemcached

/// One libmemcached connection set (`memcached_st`): a socket per server, its own view of
/// which servers are dead, its own ketama continuum.
///
/// libmemcached forbids using one `memcached_st` from two threads at once, so a handle is
/// only ever touched by the thread that borrowed it from `MemcachedHandlePool`.
/// `@unchecked Sendable` is safe because of that discipline: the pool's lock hands a
/// handle to exactly one borrower and takes it back before anyone else can get it.
final class MemcachedHandle: @unchecked Sendable {
    let raw: UnsafeMutablePointer<memcached_st>

    /// A handle for `addresses` with the behaviours of `configuration`.
    /// `ejectFailedServers` is false only for one-off readiness probes, which must try
    /// every server instead of routing around it.
    init(
        configuration: MemcachedConfiguration,
        addresses: [MemcachedServerAddress],
        ejectFailedServers: Bool = true
    ) throws(MemcachedError) {
        guard let raw = memcached_create(nil) else {
            throw MemcachedError(kind: .other, message: "memcached_create failed (out of memory)")
        }
        self.raw = raw
        for address in addresses {
            let rc = memcached_server_add(raw, address.host, address.port)
            guard rc == MEMCACHED_SUCCESS else {
                throw MemcachedError(rc, handle: raw, context: "adding server \(address.description)")
            }
        }
        for (behavior, value) in Self.behaviors(configuration, ejectFailedServers: ejectFailedServers) {
            let rc = memcached_behavior_set(raw, behavior, value)
            guard rc == MEMCACHED_SUCCESS else {
                throw MemcachedError(rc, handle: raw, context: "setting behaviour \(behavior.rawValue)=\(value)")
            }
        }
    }

    deinit { memcached_free(raw) }

    /// Closes every socket of this handle. Used after a timeout: libmemcached keeps a
    /// timed-out connection open with the late answer still on its way, and the next
    /// command on it would read that stale answer. Dead-server bookkeeping survives.
    func dropConnections() { memcached_quit(raw) }

    /// The behaviours every handle gets, and why:
    /// - MD5 ketama (`KETAMA_WEIGHTED`, equal weights): consistent hashing compatible
    ///   with other libketama clients; adding a server moves ~`1/(n+1)` of the keys.
    /// - Text protocol (libmemcached's default): memcached 1.6 deprecates the binary one.
    /// - `NO_BLOCK` + connect/poll/send/receive timeouts: no socket wait exceeds them.
    /// - `SERVER_FAILURE_LIMIT` 1 + `REMOVE_FAILED_SERVERS` + `DEAD_TIMEOUT` =
    ///   `RETRY_TIMEOUT`: one failed connect takes a server out of the continuum for
    ///   the retry timeout, then it is tried again. Its keys meanwhile live on the other
    ///   servers; for write-once snapshots a lost part just means "gone".
    /// - `TCP_NODELAY`: requests are small and latency-bound.
    static func behaviors(
        _ configuration: MemcachedConfiguration, ejectFailedServers: Bool
    ) -> [(memcached_behavior_t, UInt64)] {
        let pollMs = UInt64(configuration.pollTimeoutMs)
        let retry = UInt64(configuration.retryTimeoutSeconds)
        var list: [(memcached_behavior_t, UInt64)] = [
            // Standard MD5 ketama (libketama compatible): adding a server moves ~1/(n+1) keys.
            (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
            (MEMCACHED_BEHAVIOR_NO_BLOCK, 1),
            (MEMCACHED_BEHAVIOR_TCP_NODELAY, 1),
            (MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, UInt64(configuration.connectTimeoutMs)),
            (MEMCACHED_BEHAVIOR_POLL_TIMEOUT, pollMs),
            (MEMCACHED_BEHAVIOR_SND_TIMEOUT, pollMs * 1000),
            (MEMCACHED_BEHAVIOR_RCV_TIMEOUT, pollMs * 1000),
            (MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, retry),
            // One failed connect is enough to stop sending keys to a server.
            (MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT, 1),
        ]
        if ejectFailedServers {
            list += [
                (MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 1),
                // Without a dead timeout libmemcached never takes an ejected server back.
                (MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, retry),
            ]
        }
        return list
    }
}
