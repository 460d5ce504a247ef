import FerryHTTP

/// `GET /v1/changes?since=C&wait=S`: answered at once when the feed has
/// anything after C, else held (parked on the event loop: no worker, no pool
/// connection) until a commit the caller may see is in the feed, or S seconds
/// (at most `live.max_wait_seconds`) have passed, or the server shuts down.
extension ChangesRoutes {
    func longPoll(
        _ request: HTTPRequest, _ context: RequestContext, _ parsed: ChangesRequest, plan: ChangesPlan, caller: Caller,
        generation: Int, ticket: ParkingTicket, wait: Int
    ) throws -> HTTPResponse {
        let registry = live.registry
        caller.trace?.route = Self.waitRoute
        switch context.resumption?.reason {
        case .shutdown?:
            // Nothing was found while it waited: the client's own cursor, without asking PostgreSQL.
            registry.remove(ticket)
            return Self.answer(ChangesPage(unchangedAt: parsed), request: request, parsed: parsed)
        case .deadline?:
            // The same answer a poll gives now: an empty page (or 304) at the frontier, or what just arrived.
            registry.remove(ticket)
            return Self.answer(try poll(plan: plan, caller: caller), request: request, parsed: parsed)
        case .woken?, nil:
            break
        }
        if context.resumption == nil,
            let refusal = registry.register(
                ticket, user: database.cachedUser(caller.credential), resources: parsed.followedResources,
                stream: plan.subscription.map { WaiterRegistry.ScopeKey(scope: $0.root, id: $0.id) },
                streamName: plan.request.subscription.map { "\($0.name):\($0.id)" }, token: caller.credential.tokenHash)
        {
            // Over a limit: a plain poll, refused only if it would have to wait.
            let page = try poll(plan: plan, caller: caller)
            guard page.isEmpty else { return Self.answer(page, request: request, parsed: parsed) }
            throw refusal == .userFull ? Self.userFull(limit: registry.limits.perUser) : Self.instanceFull(limit: registry.limits.perInstance)
        }
        ticket.arm()
        let check: FeedCheck
        do {
            check = try FeedCheck.run(plan, caller: caller, generation: generation, ticket: ticket, database: database, live: live)
        } catch let problem as Problem where problem.status == 503 && context.resumption != nil {
            // PostgreSQL cannot be reached while it waits: it waits on; the
            // listener's fallback checks (or its return) wake it to try again,
            // or, with the listener up, LiveFeed.retrySoon.
            live.retrySoon(ticket)
            return .parked(HTTPParking(ticket: ticket, deadline: Self.deadline(context, wait: wait, live: live)))
        } catch {
            registry.remove(ticket)
            throw error
        }
        let accepted = check.user.map { registry.identify(ticket, user: $0, scopes: check.scopes) } ?? true
        guard check.page.isEmpty else {
            registry.remove(ticket)
            return Self.answer(check.page, request: request, parsed: parsed)
        }
        guard accepted else { throw Self.userFull(limit: registry.limits.perUser) }
        registry.hold(ticket, below: check.held ? check.frontier : nil)
        return .parked(HTTPParking(ticket: ticket, deadline: Self.deadline(context, wait: wait, live: live)))
    }

    /// The route label of a long poll's request line and metrics: its duration is the wait's.
    static let waitRoute = "/v1/changes?wait"

    /// When a long poll that arrived at `context.receivedAt` is answered at the latest.
    static func deadline(_ context: RequestContext, wait: Int, live: LiveFeed) -> Double {
        context.receivedAt + Double(min(wait, live.settings.maxWaitSeconds))
    }

    /// 503: this instance holds `live.max_waiters` waiting requests already.
    static func instanceFull(limit: Int) -> Problem {
        Problem.unavailable("this server holds as many waiting requests as it may (\(limit)); retry, or poll without wait")
    }

    /// 429: the caller holds `live.max_waiters_per_user` waiting requests on this instance already.
    static func userFull(limit: Int) -> Problem {
        Problem(
            429, .tooManyWaiters,
            "this user already has \(limit) waiting requests on this server; end one first, or poll without wait",
            headers: HTTPHeaders([("Retry-After", "5")]))
    }
}
