import CLibMemcached

/// Whether one configured server answered a readiness probe.
public struct MemcachedServerStatus: Sendable, Equatable {
    /// The server as configured, `"host:port"`.
    public let server: String
    /// True when it answered `version` within the timeouts.
    public let isUp: Bool
    /// libmemcached's reason when it did not answer.
    public let message: String?
}

extension MemcachedClient {
    /// Asks every configured server for its version over fresh connections (not the
    /// pool, and without ejection, so each server is really tried). All servers are
    /// asked at once; the whole probe takes at most about
    /// `servers.count × connectTimeoutMs + pollTimeoutMs`.
    public func pingEach() -> [MemcachedServerStatus] {
        let names = addresses.map(\.description)
        let handle: MemcachedHandle
        do {
            handle = try MemcachedHandle(configuration: configuration, addresses: addresses, ejectFailedServers: false)
        } catch {
            return names.map { MemcachedServerStatus(server: $0, isUp: false, message: error.message) }
        }
        defer { handle.dropConnections() }
        _ = memcached_version(handle.raw)
        return names.enumerated().map { index, name in
            guard let instance = memcached_server_instance_by_position(handle.raw, UInt32(index)) else {
                return MemcachedServerStatus(server: name, isUp: false, message: "no such server in handle")
            }
            if memcached_server_major_version(instance) != UInt8.max {
                return MemcachedServerStatus(server: name, isUp: true, message: nil)
            }
            let reason = memcached_server_error(instance).map { String(cString: $0) } ?? "no answer"
            return MemcachedServerStatus(server: name, isUp: false, message: reason)
        }
    }

    /// Readiness: true only if **every** configured server answered (see `pingEach`).
    ///
    /// Strict on purpose: with one server down the client still works (its keys are
    /// rerouted), but capacity and already stored values are lost, and an operator
    /// should see that. A caller that wants "at least one" can use `pingEach()`.
    public func ping() -> Bool {
        pingEach().allSatisfy(\.isUp)
    }
}
