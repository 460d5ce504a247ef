/// How long a provider's fetched keys live and how often they are fetched
/// (`auth.jwks_*`).
public struct KeyTiming: Sendable, Equatable {
    /// The key set is fetched again this often, in the background.
    public var refresh: Duration
    /// Past a refresh that failed, the keys held keep serving this much longer;
    /// then tokens that need them get 503 `jwks_unavailable`.
    public var grace: Duration
    /// An unknown `kid` fetches the key set again at most once per this interval.
    public var minRefetch: Duration
    /// How long one fetch may take.
    public var fetchTimeout: Duration

    public init(refresh: Duration, grace: Duration, minRefetch: Duration, fetchTimeout: Duration = .seconds(5)) {
        self.refresh = refresh
        self.grace = grace
        self.minRefetch = minRefetch
        self.fetchTimeout = fetchTimeout
    }
}
