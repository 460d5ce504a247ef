/// The paths load balancers and orchestrators poll. Named once: the routes are
/// registered under them, and the request log writes their lines at debug, since
/// probes every few seconds would be most of the log.
enum ProbeRoute {
    /// 200 while the process serves.
    static let health = "/healthz"
    /// 200 when PostgreSQL and memcached answer.
    static let readiness = "/readyz"

    /// Both, for the request log to quiet (an array: two comparisons cost less than hashing).
    static let all = [health, readiness]
}
