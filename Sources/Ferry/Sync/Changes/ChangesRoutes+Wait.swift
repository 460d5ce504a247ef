import FerryHTTP

/// `POST /v1/changes/wait` (API.md, "One wait for several streams"): one long
/// poll for a device's default stream and its subscriptions, each from its own
/// cursor. It answers which of them have something after their cursor that the
/// caller may read, at once when one has, else when a commit brings something
/// to one of them, else `{"changed": []}` after `wait` seconds. It waits as a
/// long poll does (parked on the event loop: no worker, no pool connection),
/// registered once with ``WaiterRegistry`` for all its streams; a hint wakes it
/// when it may concern any of them, and each pass checks only the streams the
/// hints since its last one may concern (``WaiterRegistry/takeCandidates(_:)``),
/// each with the check a `GET /v1/changes?wait=` of that stream makes
/// (``FeedCheck``, shared with other waiters as theirs are).
extension ChangesRoutes {
    /// One stream of the request, planned.
    private struct WaitedStream {
        let stream: ChangesWaitRequest.Stream
        /// Its root row in the registry; nil for the default stream.
        let root: WaiterRegistry.ScopeKey?
        let plan: ChangesPlan
    }

    func waitForChanges(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let caller = Caller(
            credential: try Caller.credential(request), trace: context.scope.trace ?? RequestTrace(),
            transaction: context.scope.transaction)
        let waited: ChangesWaitRequest
        let streams: [WaitedStream]
        do {
            guard caller.transaction == nil else {
                throw Problem.badRequest("POST /v1/changes/wait waits, and a batch does not: send it on its own")
            }
            waited = try ChangesWaitRequest(request, maxStreams: live.settings.maxWaitStreams)
            streams = try planned(waited, caller: caller)
        } catch let problem as Problem where problem.status == 400 || problem.status == 413 || problem.status == 415 {
            _ = try database.asCaller(caller, [])  // a bad token is 401 before any body error
            throw problem
        }
        // With no stream to check, nothing else asks PostgreSQL who the caller is.
        if streams.isEmpty { _ = try database.asCaller(caller, []) }
        guard let ticket = context.parkingTicket(), waited.wait > 0 else {
            return Self.changed(try check(streams, caller: caller))
        }
        let registry = live.registry
        switch context.resumption?.reason {
        case .shutdown?:
            // Nothing was found while it waited: told without asking PostgreSQL.
            registry.remove(ticket)
            return Self.changed([])
        case .deadline?:
            // What a check finds now: nothing, or what a wake too few left unsaid.
            registry.remove(ticket)
            return Self.changed(try check(streams, caller: caller))
        case .woken?, nil:
            break
        }
        if context.resumption == nil,
            let refusal = registry.register(
                ticket, user: database.cachedUser(caller.credential), resources: nil, streams: Set(streams.compactMap(\.root)),
                names: streams.compactMap { $0.stream.subscription.map { "\($0.name):\($0.id)" } },
                followsDefault: streams.contains { $0.root == nil }, token: caller.credential.tokenHash)
        {
            // Over a limit: refused only if it would have to wait.
            let changed = try check(streams, caller: caller)
            guard changed.isEmpty else { return Self.changed(changed) }
            throw refusal == .userFull ? Self.userFull(limit: registry.limits.perUser) : Self.instanceFull(limit: registry.limits.perInstance)
        }
        ticket.arm()
        // Armed first: a hint delivered from here on both marks its stream and wakes the ticket again.
        let candidates = registry.takeCandidates(ticket)
        let checking = context.resumption == nil ? streams : streams.filter { candidates.contains($0.root) }
        var changed: [String] = []
        var held: [UInt64] = []
        var accepted = true
        var retry = false
        for waitedStream in checking {
            let check: FeedCheck
            do {
                check = try FeedCheck.run(
                    waitedStream.plan, caller: caller, generation: schema.generation, ticket: ticket, database: database, live: live)
            } catch let problem as Problem where problem.status == 410 {
                // Its GET meets the 410 and starts over.
                changed.append(waitedStream.stream.key)
                continue
            } catch let problem as Problem where problem.status == 503 && context.resumption != nil {
                // PostgreSQL cannot be reached while it waits: it waits on, and this stream is checked at the
                // next wake, which comes in a second if the listener is up (LiveFeed.retrySoon).
                registry.note(ticket, candidate: waitedStream.root)
                retry = true
                continue
            } catch let problem as Problem where problem.status == 400 {
                registry.remove(ticket)
                throw Self.invalidStream(waitedStream.stream.key, problem)
            } catch {
                registry.remove(ticket)
                throw error
            }
            if let user = check.user, !registry.identify(ticket, user: user, scopes: check.scopes) { accepted = false }
            if !check.page.isEmpty { changed.append(waitedStream.stream.key) }
            if check.held { held.append(check.frontier) }
        }
        guard changed.isEmpty else {
            registry.remove(ticket)
            return Self.changed(changed)
        }
        guard accepted else { throw Self.userFull(limit: registry.limits.perUser) }
        if checking.count == streams.count {
            registry.hold(ticket, below: held.min())
        } else if let lowest = held.min() {
            // Another stream may still be held from an earlier pass: this one joins it.
            registry.holdAlso(ticket, below: lowest)
        }
        if retry { live.retrySoon(ticket) }
        return .parked(HTTPParking(ticket: ticket, deadline: Self.deadline(context, wait: waited.wait, live: live)))
    }

    /// Each stream's plan; 400 for a stream name the app did not declare or an id that cannot be its scope's.
    private func planned(_ waited: ChangesWaitRequest, caller: Caller) throws -> [WaitedStream] {
        let catalog = schema.catalog
        let generation = schema.generation
        let scopeRows = try scopes.scopes(for: catalog, generation: generation, schema: schemaName, database: database)
        let readThrough = try scopes.readThrough(for: catalog, generation: generation, schema: schemaName, database: database)
        let resources = catalog.names.sorted(by: ChangeOrder.precedes)
        return try waited.streams.map { stream in
            // A page of one entry: the check asks only whether there is one.
            let request = ChangesRequest(since: stream.since, limit: 1, resources: resources, subscription: stream.subscription)
            let undecided = ChangesPlan(request: request, catalog: catalog, scopes: scopeRows, readThrough: readThrough)
            do {
                guard let subscription = stream.subscription else {
                    return WaitedStream(stream: stream, root: nil, plan: try decided(undecided, caller: caller, generation: generation))
                }
                let plan = try subscribed(undecided, to: subscription, generation: generation)
                let root = WaiterRegistry.ScopeKey(scope: plan.subscription?.root ?? "", id: subscription.id)
                return WaitedStream(stream: stream, root: root, plan: plan)
            } catch let problem as Problem where problem.status == 400 {
                throw Self.invalidStream(stream.key, problem)
            }
        }
    }

    /// The keys of the streams with something after their cursor, each checked once now (no waiting).
    private func check(_ streams: [WaitedStream], caller: Caller) throws -> [String] {
        var changed: [String] = []
        for waitedStream in streams {
            do {
                let check = try FeedCheck.run(waitedStream.plan, caller: caller, database: database, registry: live.registry)
                if !check.page.isEmpty { changed.append(waitedStream.stream.key) }
            } catch let problem as Problem where problem.status == 410 {
                changed.append(waitedStream.stream.key)
            } catch let problem as Problem where problem.status == 400 {
                throw Self.invalidStream(waitedStream.stream.key, problem)
            }
        }
        return changed
    }

    /// A stream's 400 (an unknown stream, an id or cursor that does not fit) as the body's, naming its key.
    private static func invalidStream(_ key: String, _ problem: Problem) -> Problem {
        ChangesWaitRequest.invalid("since's \(key.prefix(64)): \(problem.detail ?? "invalid")")
    }

    /// `{"changed": [keys]}`, the caller's own.
    private static func changed(_ keys: [String]) -> HTTPResponse {
        .json(
            JSONValue.object([("changed", .array(keys.map { .string($0) }))]).bytes,
            headers: HTTPHeaders([("Cache-Control", "private, no-store")]))
    }
}
