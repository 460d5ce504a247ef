import FerryHTTP
import FerryPostgres

/// `GET /console/api/health`: a JSON twin of `/metrics` for the console's
/// live charts, plus what Prometheus text cannot say: whether memcached
/// answers, the feed's frontier lag and the transactions holding it back.
/// While PostgreSQL cannot be asked, an operator it checked lately still gets the
/// process's own figures, `postgresql.up` false and `feed` null.
///
/// Counters are totals since the process started; the page takes two samples
/// and draws rates. Requests to the console's own routes are left out, so the
/// charts show the API's traffic and not their own polling.
extension ConsoleRoutes {
    func health(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        try Self.onlyQuery(request, [])
        let hash = try Self.tokenHash(request)
        let (session, postgresql, feed) = try asked(hash)
        Self.trace(session, context)
        let requests = metrics.requests.totals(excludingRoutesUnder: Self.prefix)
        let pool = self.pool.stats
        return Self.json(
            .object([
                ("at", .int(Int(TokenCache.wallClockMs()))),
                (
                    "requests",
                    .object([
                        ("total", .int(requests.total)), ("client_errors", .int(requests.clientErrors)),
                        ("server_errors", .int(requests.serverErrors)),
                        (
                            "latency",
                            .object([
                                ("bounds", .array(RequestMetrics.bucketBounds.map { .double($0) })),
                                ("counts", .array(requests.buckets.map { .int($0) })), ("sum_seconds", .double(requests.sum)),
                            ])
                        ),
                    ])
                ),
                (
                    "http",
                    .object(
                        metrics.serverGauges.map { [("open_connections", .int($0.open)), ("in_flight", .int($0.inFlight))] }
                            ?? [])
                ),
                (
                    "pool",
                    .object([
                        ("size", .int(pool.size)), ("open", .int(pool.open)), ("in_use", .int(pool.inUse)),
                        ("waiting", .int(pool.waiting)), ("waits", .int(pool.waits)), ("acquire_timeouts", .int(pool.acquireTimeouts)),
                        ("connect_failures", .int(pool.connectFailures)),
                    ])
                ),
                (
                    "memcached",
                    .object([
                        ("up", .bool(memcached.ping())), ("hits", .int(metrics.memcachedHits.value)),
                        ("misses", .int(metrics.memcachedMisses.value)), ("errors", .int(metrics.memcachedErrors.value)),
                    ])
                ),
                ("paging_snapshots_created", .int(metrics.pagingSnapshotsCreated.value)),
                ("changes_polls", .int(metrics.changesPolls.value)),
                ("postgresql", postgresql),
                ("feed", feed),
            ]))
    }

    /// The operator, PostgreSQL's state and the feed's figures. While PostgreSQL cannot
    /// check the token (503), a session it checked lately still sees this process's own
    /// figures (``ConsoleRecentSessions``), with the reason, and no feed.
    private func asked(_ hash: String) throws -> (OperatorSession, postgresql: JSONValue, feed: JSONValue) {
        let session: OperatorSession
        let results: [PostgresResult]
        do {
            // As long as `/readyz` waits: a frozen PostgreSQL reads as down, not as a page that hangs.
            (session, results) = try console.run(
                hash, [Self.feedPosition, Self.oldestTransactions(hash)], answerLimit: PostgresGateway.probeAnswerLimit)
        } catch let problem as Problem where problem.status != 503 {
            // PostgreSQL answered, and refused the token (revoked, expired): it is not
            // remembered for an outage that may follow.
            recentSessions.forget(hash)
            throw problem
        } catch let problem as Problem {
            guard let remembered = recentSessions.recent(hash) else { throw problem }
            let down = JSONValue.object([("up", .bool(false)), ("detail", .string(problem.detail ?? "the database is unavailable"))])
            return (remembered, down, .null)
        }
        recentSessions.remember(hash, session)
        var feed = try Self.feedJSON(results[0])
        if case .object(var members) = feed {
            members.append(("running_transactions", Self.transactionsJSON(results[1])))
            feed = .object(members)
        }
        return (session, .object([("up", .bool(true))]), feed)
    }

    /// The oldest running transactions with an xid, oldest first (the first holds the frontier).
    static func transactionsJSON(_ result: PostgresResult) -> JSONValue {
        .array(
            result.rows.compactMap { row in
                guard let xid = row["xid"] else { return nil }
                func text(_ column: String) -> JSONValue { row[column].map { .string($0) } ?? .null }
                return .object([
                    ("xid", .string(xid)), ("pid", (try? row.int("pid")).map { .int($0) } ?? .null), ("application", text("application_name")),
                    ("state", text("state")), ("age_ms", (try? row.int64("age_ms")).map { .int(Int($0)) } ?? .null),
                    ("backend_type", text("backend_type")), ("role", text("role_name")), ("query", text("query")),
                    ("this_database", (try? row.bool("this_database")).map { .bool($0) } ?? .null),
                ])
            })
    }
}
