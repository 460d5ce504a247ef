/// A failed memcached call. A miss is not an error: `get` answers `nil` for it.
public struct MemcachedError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, coarse enough for a caller to decide what to do.
    public enum Kind: Sendable, Equatable {
        /// No server could answer in time: connection refused or reset, timeout,
        /// server marked dead, no servers left, or no free pooled connection.
        /// Retrying later may work.
        case unavailable
        /// The value is larger than the server's item size limit (`-I`, 1 MiB by default).
        case tooLarge
        /// The key is empty, longer than 250 bytes, or holds a space, a control
        /// character or a non-ASCII byte.
        case invalidKey
        /// The configuration or an argument is unusable (an unparsable server address,
        /// an empty server list, a TTL out of range).
        case invalidArgument
        /// Anything else libmemcached reported (protocol errors, server errors).
        case other
    }

    public let kind: Kind
    /// The raw `memcached_return_t` that libmemcached returned, or `nil` when the
    /// error was raised by this wrapper before libmemcached was asked.
    public let returnCode: Int?
    /// A human-readable explanation; it names servers but never values.
    public let message: String

    public init(kind: Kind, returnCode: Int? = nil, message: String) {
        self.kind = kind
        self.returnCode = returnCode
        self.message = message
    }

    /// `"memcached <kind>: <message>"`.
    public var description: String { "memcached \(kind): \(message)" }
}
