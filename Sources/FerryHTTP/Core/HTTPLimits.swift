/// Every size and time limit the server enforces, with their defaults.
///
/// HTTP parsing is hostile territory: nothing a client sends may grow
/// without bound or wait forever.
public struct HTTPLimits: Sendable, Equatable {
    /// Longest request line in bytes, CRLF excluded; longer answers 414.
    public var maxRequestLineBytes: Int = 8 * 1024
    /// Largest header section in bytes (request line excluded); larger answers 431.
    public var maxHeaderBytes: Int = 16 * 1024
    /// Most header fields (trailers included); more answers 431.
    public var maxHeaderCount: Int = 100
    /// Largest request body after de-chunking; larger answers 413.
    public var maxBodyBytes: Int = 10 * 1024 * 1024
    /// Seconds for a whole header section to arrive, from its first byte (slowloris defence).
    public var headerTimeoutSeconds: Double = 10
    /// Seconds an idle keep-alive connection stays open.
    public var idleTimeoutSeconds: Double = 60
    /// Seconds a body read may stall with no progress.
    public var bodyTimeoutSeconds: Double = 30
    /// The slowest pace a body may keep, in bytes a second, after a first
    /// `bodyTimeoutSeconds` of grace; 0 leaves only the stall limit. A client that
    /// trickles a byte every few seconds never stalls, and would otherwise hold its
    /// connection and buffer for as long as its body lasts (slowloris on the body; as
    /// Apache's `mod_reqtimeout` MinRate).
    public var minBodyBytesPerSecond: Int = 1000
    /// Seconds a response write may stall with no progress.
    public var writeTimeoutSeconds: Double = 30
    /// Most open client connections; beyond it a new one gets 503 and is closed.
    public var maxConnections: Int = 10_000
    /// Seconds to finish in-flight requests after SIGTERM/SIGINT.
    public var shutdownGraceSeconds: Double = 10

    /// The defaults.
    public init() {}
}
