/// The paths load balancers and orchestrators poll. Named once: the routes are
/// registered under them, and the request log writes their lines at debug, since
/// probes every few seconds would be most of the log.
enum ProbeRoute {
    /// 200 while the process serves.
    static let health = "/healthz"
    /// 200 when PostgreSQL and memcached answer.
    static let readiness = "/readyz"

    /// Whether a route pattern is a probe's.
    static func contains(_ route: String) -> Bool { route == health || route == readiness }
}
