/// Why a configuration could not be loaded; the message names the key.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key (`limits.max_body_bytes`), environment variable or file concerned.
    public let key: String
    /// What is wrong with it.
    public let reason: String
    /// The JSON file that set `key`, when a file did: an operator with several
    /// files (one an instance) learns which one to open.
    public let file: String?

    public init(key: String, reason: String, file: String? = nil) {
        self.key = key
        self.reason = reason
        self.file = file
    }

    /// `configuration error: [<file>: ]<key>: <reason>`.
    public var description: String {
        "configuration error: \(file.map { "\($0): " } ?? "")\(key): \(reason)"
    }
}
