import FerryHTTP
import FerryMemcached

/// `GET /readyz`: 200 `{"postgresql":"up","memcached":"up"}` when `SELECT 1` runs
/// through the serve pool and every memcached server answers; otherwise 503
/// `unavailable` (problem+json, `Retry-After: 1`) with the same two members naming
/// what is down. No authentication, no application tables: cheap enough for a load
/// balancer to poll, and bounded by the pool's acquire timeout, a 2 s wait for each of
/// PostgreSQL's answers (`PostgresGateway.probeAnswerLimit`), and memcached's
/// connect and poll timeouts. When one transaction has held the changes feed back
/// longer than `live.max_feed_hold_seconds`, a `feed` member says so
/// (`{"held": "over_limit", "held_seconds", "held_by", "xid"}`), still 200.
struct ReadinessRoute: Sendable {
    let database: PostgresGateway
    let memcached: MemcachedClient
    let feedHold: FeedHoldWatch

    func register(on router: inout Router) {
        let database = database
        let memcached = memcached
        let feedHold = feedHold
        router.get(
            ProbeRoute.readiness,
            { _, _ in
                let postgresql = Self.postgresqlIsUp(database)
                let cache = memcached.ping()
                var members: [(String, JSONValue)] = [
                    ("postgresql", .string(postgresql ? "up" : "down")), ("memcached", .string(cache ? "up" : "down")),
                ]
                // The feed held back past its limit is said, not refused: every instance
                // shares the database, so a 503 would take them all out of the balancer
                // and turn late changes into an outage.
                if postgresql, let hold = try? feedHold.current(), hold.seconds > feedHold.limitSeconds {
                    members.append(
                        (
                            "feed",
                            .object([
                                ("held", .string("over_limit")), ("held_seconds", .int(Int(hold.seconds))),
                                ("held_by", .string(hold.kind)), ("xid", .string(String(hold.xid))),
                            ])
                        ))
                }
                if postgresql && cache { return .json(JSONValue.object(members).bytes) }
                let down = [postgresql ? nil : "postgresql", cache ? nil : "memcached"].compactMap { $0 }
                return Problem.unavailable("not ready: \(down.joined(separator: " and ")) down", retryAfter: 1)
                    .withExtra(members).response
            })
    }

    static func postgresqlIsUp(_ database: PostgresGateway) -> Bool {
        let answer = try? database.anonymous(
            [PlannedStatement("SELECT 1 AS one" as SQLQuery)], answerLimit: PostgresGateway.probeAnswerLimit)
        return answer?.first?.first?["one"] == "1"
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
