import CLibMemcached

extension MemcachedClient {
    /// Runs one operation on a pooled handle, retrying while libmemcached is still
    /// discovering a dead server (see `isReroutable`), and cleaning up after failures.
    func perform<R>(
        _ what: String, _ attempt: (MemcachedHandle) throws(MemcachedError) -> R
    ) throws(MemcachedError) -> R {
        try pool.withHandle { handle throws(MemcachedError) -> R in
            var attemptsLeft = Self.maxAttempts
            while true {
                attemptsLeft -= 1
                do throws(MemcachedError) {
                    return try attempt(handle)
                } catch {
                    if error.kind == .unavailable && !Self.didNoIO(error) {
                        // A timed-out socket may still receive the late answer; a later
                        // command would read it as its own. Start those sockets afresh.
                        handle.dropConnections()
                    }
                    guard attemptsLeft > 0, Self.isReroutable(error) else { throw error }
                }
            }
        }
    }

    /// Errors that mean "the server this call went to could not be connected to" (or
    /// dropped the connection). libmemcached has then marked the server failed, and the
    /// next attempt ejects it and goes to another server, or reconnects to a restarted
    /// one. Timeouts are not retried: each one already cost a full poll timeout.
    static func isReroutable(_ error: MemcachedError) -> Bool {
        guard let code = error.returnCode else { return false }
        return [
            MEMCACHED_SERVER_MARKED_DEAD, MEMCACHED_SERVER_TEMPORARILY_DISABLED,
            MEMCACHED_CONNECTION_FAILURE, MEMCACHED_ERRNO, MEMCACHED_HOST_LOOKUP_FAILURE,
        ].contains { Int($0.rawValue) == code }
    }

    /// Failures decided from libmemcached's bookkeeping, without touching a socket.
    static func didNoIO(_ error: MemcachedError) -> Bool {
        guard let code = error.returnCode else { return true }
        return code == Int(MEMCACHED_SERVER_MARKED_DEAD.rawValue)
            || code == Int(MEMCACHED_SERVER_TEMPORARILY_DISABLED.rawValue)
    }

    /// Throws the handle's last recorded error if it is a real failure. libmemcached
    /// records every failure of the current call there, including the ones its fetch
    /// loop swallows (a read timeout, an unreachable server during a multi-get).
    static func throwLastError(of handle: MemcachedHandle, context: String) throws(MemcachedError) {
        let rc = memcached_last_error(handle.raw)
        if isFailure(rc) {
            throw MemcachedError(rc, handle: handle.raw, context: context)
        }
    }

    /// Whether `rc` is an error rather than one of libmemcached's success-like answers.
    static func isFailure(_ rc: memcached_return_t) -> Bool {
        ![
            MEMCACHED_SUCCESS, MEMCACHED_NOTFOUND, MEMCACHED_END, MEMCACHED_STORED,
            MEMCACHED_DELETED, MEMCACHED_VALUE, MEMCACHED_STAT, MEMCACHED_ITEM,
            MEMCACHED_BUFFERED,
        ].contains(rc)
    }
}
