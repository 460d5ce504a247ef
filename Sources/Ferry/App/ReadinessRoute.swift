import FerryHTTP
import FerryMemcached

/// `GET /readyz`: 200 `{"postgresql":"up","memcached":"up"}` when `SELECT 1` runs
/// through the serve pool and every memcached server answers; otherwise 503
/// `unavailable` (problem+json, `Retry-After: 1`) with the same two members naming
/// what is down. No authentication, no application tables: cheap enough for a load
/// balancer to poll, and bounded by the pool's acquire timeout and memcached's
/// connect and poll timeouts.
struct ReadinessRoute: Sendable {
    let database: PostgresGateway
    let memcached: MemcachedClient

    func register(on router: inout Router) {
        let database = database
        let memcached = memcached
        router.get(ProbeRoute.readiness, { _, _ in
            let postgresql = Self.postgresqlIsUp(database)
            let cache = memcached.ping()
            let members: [(String, JSONValue)] = [
                ("postgresql", .string(postgresql ? "up" : "down")), ("memcached", .string(cache ? "up" : "down")),
            ]
            if postgresql && cache { return .json(JSONValue.object(members).bytes) }
            let down = [postgresql ? nil : "postgresql", cache ? nil : "memcached"].compactMap { $0 }
            return Problem.unavailable("not ready: \(down.joined(separator: " and ")) down", retryAfter: 1)
                .withExtra(members).response
        })
    }

    static func postgresqlIsUp(_ database: PostgresGateway) -> Bool {
        do {
            let result = try database.anonymous([PlannedStatement("SELECT 1")])[0]
            return try result.rows.first?.int(0) == 1
        } catch {
            return false
        }
    }
}

extension Problem {
    /// This problem with `members` appended.
    func withExtra(_ members: [(String, JSONValue)]) -> Problem {
        var copy = self
        copy.extra += members
        return copy
    }
}
