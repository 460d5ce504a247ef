import CLibMemcached

extension MemcachedClient {
    /// The values of all `keys` that exist, fetched from every server in one round
    /// (`memcached_mget` plus a fetch loop). Misses are absent from the answer; duplicate
    /// keys are asked once. Throws `.unavailable` if any server that a key was sent to
    /// could not answer, so an absent key is a miss on the server that currently owns it
    /// (after a server was ejected, its keys are owned by the others and so are misses).
    public func getMany(_ keys: [String]) throws(MemcachedError) -> [String: [UInt8]] {
        var unique: [String] = []
        var seen = Set<String>()
        for key in keys where seen.insert(key).inserted {
            try MemcachedKey.validate(key)
            unique.append(key)
        }
        if unique.isEmpty { return [:] }
        return try perform("get_multi") { handle throws(MemcachedError) -> [String: [UInt8]] in
            try Self.multiGet(unique, on: handle)
        }
    }

    /// One attempt of `getMany` on one handle.
    static func multiGet(_ keys: [String], on handle: MemcachedHandle) throws(MemcachedError) -> [String: [UInt8]] {
        // All keys in one NUL-separated buffer so the C pointers stay valid for the call.
        var storage: [CChar] = []
        var offsets: [Int] = []
        var lengths: [Int] = []
        for key in keys {
            offsets.append(storage.count)
            lengths.append(key.utf8.count)
            storage.append(contentsOf: key.utf8.map { CChar(bitPattern: $0) })
            storage.append(0)
        }
        let rc = storage.withUnsafeBufferPointer { buffer -> memcached_return_t in
            let base = buffer.baseAddress!
            let pointers: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            return memcached_mget(handle.raw, pointers, lengths, keys.count)
        }
        guard rc == MEMCACHED_SUCCESS else {
            throw MemcachedError(rc, handle: handle.raw, context: "get_multi of \(keys.count) keys")
        }
        var found: [String: [UInt8]] = [:]
        // An allocated result: libmemcached frees it itself when the loop ends.
        guard let result = memcached_result_create(handle.raw, nil) else {
            throw MemcachedError(kind: .other, message: "memcached_result_create failed (out of memory)")
        }
        var fetchRC = MEMCACHED_SUCCESS
        while memcached_fetch_result(handle.raw, result, &fetchRC) != nil {
            let keyLength = memcached_result_key_length(result)
            let key = memcached_result_key_value(result).withMemoryRebound(to: UInt8.self, capacity: keyLength) {
                String(decoding: UnsafeBufferPointer(start: $0, count: keyLength), as: UTF8.self)
            }
            let length = memcached_result_length(result)
            if length == 0 {
                found[key] = []
            } else {
                found[key] = memcached_result_value(result).withMemoryRebound(to: UInt8.self, capacity: length) {
                    Array(UnsafeBufferPointer(start: $0, count: length))
                }
            }
        }
        guard fetchRC == MEMCACHED_END || fetchRC == MEMCACHED_NOTFOUND || fetchRC == MEMCACHED_SUCCESS else {
            throw MemcachedError(fetchRC, handle: handle.raw, context: "get_multi fetch")
        }
        // Read all answers first so no connection is left with pending replies. Then the
        // handle's error record tells what the return codes hide: the text protocol's
        // mget skips a server it cannot connect to, and a server that times out mid-fetch
        // ends the loop like an END would.
        try throwLastError(of: handle, context: "get_multi fetch")
        // When no server answers within the poll timeout, the fetch loop simply stops,
        // recording nothing; the unanswered requests are still counted per server.
        for index in 0..<memcached_server_count(handle.raw) {
            guard let instance = memcached_server_instance_by_position(handle.raw, index),
                memcached_server_response_count(instance) > 0
            else { continue }
            let name = "\(String(cString: memcached_server_name(instance))):\(memcached_server_port(instance))"
            throw MemcachedError(
                kind: .unavailable, returnCode: Int(MEMCACHED_TIMEOUT.rawValue),
                message: "get_multi fetch: \(name) did not answer in time")
        }
        return found
    }
}
