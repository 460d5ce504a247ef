import CLibMemcached

extension MemcachedError {
    /// Classifies a libmemcached return code. `context` says which call failed and is
    /// prefixed to libmemcached's own description (which names the server).
    init(_ rc: memcached_return_t, handle: UnsafeMutablePointer<memcached_st>?, context: String) {
        let detail: String
        if let handle, let text = memcached_last_error_message(handle) {
            detail = String(cString: text)
        } else {
            detail = String(cString: memcached_strerror(nil, rc))
        }
        self.init(kind: Self.kind(of: rc), returnCode: Int(rc.rawValue), message: "\(context): \(detail)")
    }

    /// The kind a return code belongs to. Only codes that mean "the server could not
    /// be reached or did not answer in time" are `.unavailable`; that is the class a
    /// caller may retry later or route around.
    static func kind(of rc: memcached_return_t) -> Kind {
        switch rc {
        case MEMCACHED_E2BIG:
            return .tooLarge
        case MEMCACHED_BAD_KEY_PROVIDED, MEMCACHED_KEY_TOO_BIG, MEMCACHED_NO_KEY_PROVIDED:
            return .invalidKey
        case MEMCACHED_CONNECTION_FAILURE, MEMCACHED_CONNECTION_BIND_FAILURE,
            MEMCACHED_HOST_LOOKUP_FAILURE, MEMCACHED_WRITE_FAILURE, MEMCACHED_READ_FAILURE,
            MEMCACHED_UNKNOWN_READ_FAILURE, MEMCACHED_PARTIAL_READ, MEMCACHED_ERRNO,
            MEMCACHED_TIMEOUT, MEMCACHED_SERVER_MARKED_DEAD,
            MEMCACHED_SERVER_TEMPORARILY_DISABLED, MEMCACHED_NO_SERVERS,
            MEMCACHED_SOME_ERRORS, MEMCACHED_IN_PROGRESS, MEMCACHED_FAILURE,
            MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE:
            return .unavailable
        default:
            return .other
        }
    }
}
