import FerryHTTP

/// `GET /v1/changes` with `Accept: text/event-stream`: the feed as a stream of
/// server-sent events, one page each (`id` its cursor, `event: changes`,
/// `data` the page as a poll answers it), the first at once and the others as
/// commits the caller may see enter the feed. `Last-Event-ID` resumes after
/// an event. The stream is parked on the event loop between pages (no worker,
/// no pool connection), sends a comment every `live.heartbeat_seconds` while
/// quiet, and ends after `live.max_stream_seconds` or at shutdown (the client
/// reconnects with `Last-Event-ID`). An error once the stream has started is
/// an `event: problem` with the problem as its data, and ends the stream.
extension ChangesRoutes {
    func eventStream(
        _ context: RequestContext, _ parsed: ChangesRequest, plan: ChangesPlan, caller: Caller, generation: Int,
        ticket: ParkingTicket
    ) throws -> HTTPResponse {
        let registry = live.registry
        let resumption = context.resumption
        caller.trace?.route = Self.streamRoute
        if resumption?.reason == .shutdown || resumption?.reason == .deadline {
            // An empty last part ends the stream; the client reconnects where it got to.
            registry.remove(ticket)
            return HTTPResponse(status: 200, bytes: [])
        }
        if resumption == nil,
            let refusal = registry.register(
                ticket, user: database.cachedUser(caller.credential), resources: parsed.followedResources,
                stream: plan.subscription.map { WaiterRegistry.ScopeKey(scope: $0.root, id: $0.id) },
                streamName: plan.request.subscription.map { "\($0.name):\($0.id)" }, token: caller.credential.tokenHash)
        {
            throw refusal == .userFull ? Self.userFull(limit: registry.limits.perUser) : Self.instanceFull(limit: registry.limits.perInstance)
        }
        // Each part goes on from the cursor of the last event sent.
        var request = parsed
        if let sent = registry.cursor(of: ticket).flatMap(ChangeCursor.init(token:)) {
            request = parsed.continuing(after: sent)
        }
        let plan = plan.serving(request)
        ticket.arm()
        var part: [UInt8] = resumption == nil ? ServerSentEvent.retry(milliseconds: Self.reconnectMilliseconds) : []
        do {
            let check = try FeedCheck.run(plan, caller: caller, generation: generation, ticket: ticket, database: database, live: live)
            if let user = check.user, !registry.identify(ticket, user: user, scopes: check.scopes) {
                throw Self.userFull(limit: registry.limits.perUser)
            }
            // The first event goes out even when empty: the client learns the stream is live, and its cursor.
            if !check.page.isEmpty || resumption == nil {
                // Exactly the page a poll answers (compact); made once when many streams take it.
                part += check.page.event
                registry.setCursor(check.page.cursorToken, of: ticket)
            }
            if check.page.hasMore {
                // Round again as soon as the client has taken this page.
                ticket.wake()
            } else {
                registry.hold(ticket, below: check.held ? check.frontier : nil)
            }
        } catch let problem as Problem where problem.status == 503 && resumption != nil {
            // PostgreSQL cannot be reached: the stream stays; the listener's fallback checks retry.
            return parked(ticket, context: context, part: [])
        } catch {
            registry.remove(ticket)
            // Before the stream has started, the error is the answer.
            guard resumption != nil else { throw error }
            let problem = Problem.answer(for: error, context: context, logger: context.logger)
            guard case .bytes(let body) = problem.body else { return HTTPResponse(status: 200, bytes: []) }
            return HTTPResponse(status: 200, bytes: ServerSentEvent(event: "problem", data: CompactJSON.compacted(body) ?? body).bytes)
        }
        return parked(ticket, context: context, part: part)
    }

    private func parked(_ ticket: ParkingTicket, context: RequestContext, part: [UInt8]) -> HTTPResponse {
        let settings = live.settings
        let stream = HTTPParking.Stream(
            bytes: part, heartbeat: HTTPParking.Heartbeat(interval: settings.heartbeatSeconds, bytes: ServerSentEvent.comment))
        return .parked(
            HTTPParking(ticket: ticket, deadline: context.receivedAt + settings.maxStreamSeconds, stream: stream),
            headers: HTTPHeaders([
                ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                ("Vary", "Authorization"), ("X-Accel-Buffering", "no"),
            ]))
    }

    /// The route label of an event stream's request line and metrics.
    static let streamRoute = "/v1/changes (stream)"

    /// What a client waits before it reconnects after the stream ends (the `retry` field).
    static let reconnectMilliseconds = 1_000
}
