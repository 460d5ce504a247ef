/// Why a configuration could not be loaded; the message names the key.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key (`limits.max_body_bytes`), environment variable or file concerned.
    public let key: String
    /// What is wrong with it.
    public let reason: String

    public init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    /// `configuration error: <key>: <reason>`.
    public var description: String { "configuration error: \(key): \(reason)" }
}
