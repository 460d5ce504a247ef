import Foundation

/// The upload half of a sync.
extension SyncEngine {
    /// Sends the outbox until it is empty or an answer says to stop. A request
    /// that must be merged and sent again (409, 412) is planned afresh in the
    /// next pass, at most ``SyncRound/maxPasses`` per round, so that a row
    /// edited on two devices in a tight loop cannot hold the round forever.
    ///
    /// Requests go in bulk calls (``UploadPlanner/bundle(_:schema:maxBulk:solo:)``).
    /// A bulk call applies all or nothing, so when the server refuses one, the
    /// items it names go alone in the next pass (where a conflict is merged and
    /// a poison write rejected by itself) and the rest go in bulk again.
    func push(_ round: inout SyncRound) async throws {
        while round.beginPass() {
            guard let schema = try store.schema() else { return }
            let input = try store.uploadInput()
            let requests = UploadPlanner.plan(input.operations, schema: schema, rows: input.rows, bases: input.bases)
            try store.discardCancelled(input.operations, planned: requests)
            try update { _ in }
            guard !requests.isEmpty else { return }
            var again = false
            for planned in UploadPlanner.bundle(requests, schema: schema, maxBulk: maxBulk, solo: round.solo) {
                // Rows refused with a parent earlier in this pass are not sent.
                let kept = planned.requests.filter { !round.refused.contains(RowKey(resource: $0.resource, id: $0.rowID)) }
                guard !kept.isEmpty else { continue }
                if planned.isBatch && kept.count < planned.requests.count {
                    // A group applies whole or not at all: without that row, not at all.
                    let problem = JSONValue.object([
                        "code": .string("parent_rejected"), "status": .int(424),
                        "detail": .string("a row of this group belongs to a row the server refused"),
                    ])
                    _ = try rejectGroup(UploadBundle(kept, batch: true), TransportResponse(status: 424, body: problem.encoded()), &round)
                    continue
                }
                let bundle = kept.count == planned.requests.count ? planned : UploadBundle(kept)
                if bundle.isBatch {
                    // A merged group is sent again next round, and what follows
                    // it may need its rows: nothing more this round.
                    if try await uploadBatch(bundle, &round) { again = true; break }
                } else if bundle.isBulk {
                    // Nothing after a refused call goes this round: its children
                    // would meet a parent that is not there yet.
                    if let alone = try await uploadBulk(bundle) { round.solo.formUnion(alone); again = true; break }
                } else if try await upload(bundle.requests[0], &round) {
                    again = true
                }
            }
            if !again { return }
        }
    }

    /// The HTTP call for a bulk bundle: the array of items Ferry's bulk
    /// create, update or delete takes.
    func httpRequest(_ bundle: UploadBundle) -> TransportRequest {
        let first = bundle.requests[0]
        let items: [JSONValue] = bundle.requests.map { request in
            switch request.action {
            case .create:
                return .object(request.body ?? [:])
            case .update:
                var body = request.body ?? [:]
                body["id"] = .string(request.rowID)
                if let base = request.baseRevision { body["revision"] = .int(base) }
                return .object(body)
            case .delete:
                return .object(["id": .string(request.rowID), "revision": request.baseRevision.map(JSONValue.int) ?? .null])
            }
        }
        let method =
            switch first.action {
            case .create: "POST";
            case .update: "PATCH";
            case .delete: "DELETE"
            }
        var http = TransportRequest(method: method, path: "/v1/\(PercentEncoding.encoded(first.resource))", body: JSONValue.array(items).encoded())
        http.headers["Idempotency-Key"] = bundle.idempotencyKey
        return http
    }

    /// Sends a bulk call and applies its answer. Returns the rows to send
    /// alone next round when the server refused the call (nil when it took
    /// it); throws when the call must wait (network, 5xx, 429, 401).
    func uploadBulk(_ bundle: UploadBundle) async throws -> Set<RowKey>? {
        let opIDs = bundle.opIDs
        try store.transition(opIDs, .sent)
        let response: TransportResponse
        do {
            response = try await send(httpRequest(bundle))
        } catch {
            try postpone(opIDs, error: Self.noAnswer(error))
            throw error
        }
        let step = retryStep(after: response)
        switch step {
        case .success:
            guard case .array(let rows)? = try? JSONValue.decode(response.body), rows.count == bundle.requests.count else {
                try store.transition(opIDs, .deferred)
                throw FerryKitError.malformedAnswer("a bulk answer without one row per item")
            }
            try store.acknowledge(zip(bundle.requests, rows).map { ($0, $1.object) })
            return nil
        case .retry, .refreshToken, .pause:
            try stop(opIDs, response, step)
        case .merge, .tombstone, .reject:
            try store.transition(opIDs, .returned)
            let keys = bundle.requests.map { RowKey(resource: $0.resource, id: $0.rowID) }
            let named: [RowKey] = (response.object?["errors"]?.array ?? []).compactMap { error in
                guard let index = error.object?["index"]?.int, keys.indices.contains(Int(index)) else { return nil }
                return keys[Int(index)]
            }
            return Set(named.isEmpty ? keys : named)
        }
    }

    func httpRequest(_ request: UploadRequest) -> TransportRequest {
        let path = "/v1/\(PercentEncoding.encoded(request.resource))"
        let rowPath = path + "/" + PercentEncoding.encoded(request.rowID)
        var http: TransportRequest
        switch request.action {
        case .create:
            http = TransportRequest(method: "POST", path: path, body: JSONValue.object(request.body ?? [:]).encoded())
        case .update:
            var body = request.body ?? [:]
            if let base = request.baseRevision { body["revision"] = .int(base) }
            http = TransportRequest(method: "PATCH", path: rowPath, body: JSONValue.object(body).encoded())
            if request.baseRevision == nil { http.headers["If-Match"] = "*" }
        case .delete:
            if let base = request.baseRevision {
                http = TransportRequest(method: "DELETE", path: rowPath + "?revision=\(base)")
            } else {
                http = TransportRequest(method: "DELETE", path: rowPath, headers: ["If-Match": "*"])
            }
        }
        http.headers["Idempotency-Key"] = request.idempotencyKey
        return http
    }

    /// Sends one request and applies its answer. True when it must be planned
    /// and sent again (after a merge).
    func upload(_ request: UploadRequest, _ round: inout SyncRound) async throws -> Bool {
        try store.transition(request.opIDs, .sent)
        let response: TransportResponse
        do {
            response = try await send(httpRequest(request))
        } catch {
            try postpone(request.opIDs, error: Self.noAnswer(error))
            throw error
        }
        if request.action == .delete, response.status == 404, try store.heldBySubscription(request.resource, id: request.rowID) {
            // A row a subscription brought (a public set) is readable and not
            // writable: the server hides it from writes, so a delete meets 404
            // while the row lives on. Refused, not done: it comes back, with
            // its `rejected` event (PublicRowWritesIntegrationTests).
            return try reject(request, response, &round)
        }
        if request.action == .delete, response.status == 404 || response.status == 410 {
            // Gone already, or never created (a create whose answer was lost, then
            // deleted here): what the delete wanted is so.
            try store.acknowledge(request, serverRow: ["id": .string(request.rowID), "is_deleted": .bool(true)])
            return false
        }
        let step = retryStep(after: response)
        switch step {
        case .success:
            try store.acknowledge(request, serverRow: (try? JSONValue.decode(response.body))?.object)
            return false
        case .merge:
            guard let current = response.object?["current"]?.object else { return try reject(request, response, &round) }
            try store.transition(request.opIDs, .returned)
            try rebase(request, on: current)
            return true
        case .tombstone:
            // The tombstone first: it marks every pending edit of the row rejected
            // and says so in its event; then these operations carry the answer
            // (refused here if the tombstone was older than what the store had).
            try applyTombstone(of: request, response)
            try store.transition(request.opIDs, .refused, error: response.body)
            try store.noteError(request.opIDs, response.body)
            return false
        case .reject:
            return try reject(request, response, &round)
        case .retry, .refreshToken, .pause:
            try stop(request.opIDs, response, step)
        }
    }

    func reject(_ request: UploadRequest, _ response: TransportResponse, _ round: inout SyncRound) throws -> Bool {
        try refuse(request, response)
        try refuseDependants(of: request, &round)
        return false
    }

    /// The operations of `request` are rejected with the server's problem, the
    /// row rolls back, and the app hears of it.
    func refuse(_ request: UploadRequest, _ response: TransportResponse) throws {
        try store.transition(request.opIDs, .refused, error: response.body)
        try store.rollBack(request)
        emit([.rejected(resource: request.resource, id: request.rowID, status: response.status, problem: response.body)])
    }

    /// After a refused create: the rows made locally under it go too (424).
    func refuseDependants(of request: UploadRequest, _ round: inout SyncRound) throws {
        guard request.action == .create else { return }
        let dependants = try store.rejectDependants(ofCreated: request.resource, id: request.rowID)
        round.refused.formUnion(dependants.map { RowKey(resource: $0.resource, id: $0.id) })
        emit(dependants.map { .rejected(resource: $0.resource, id: $0.id, status: 424, problem: $0.problem) })
    }
}

extension SyncEngine {
    /// A 409 or 412 carried the server's version: the request's row is merged
    /// onto it (a create that met an existing row becomes an update), to be
    /// planned and sent again.
    func rebase(_ request: UploadRequest, on current: RowData) throws {
        if request.action == .create { try store.createBecameUpdate(request) }
        emit(try store.applyRemote(request.resource, current, resolver: resolvers[request.resource]))
    }

    /// A 410 on the request's row: its tombstone (the answer's `current`, or a
    /// bare one) removes the row and rejects its pending edits, with an event.
    func applyTombstone(of request: UploadRequest, _ response: TransportResponse) throws {
        let tombstone = response.object?["current"]?.object ?? ["id": .string(request.rowID), "is_deleted": .bool(true)]
        emit(try store.applyRemote(request.resource, tombstone, resolver: nil))
    }

    /// The answer says wait (5xx, 429: the operations go back to pending with
    /// their due time) or sign in again (401): this round of uploads stops.
    func stop(_ opIDs: [UUID], _ response: TransportResponse, _ step: RetryPolicy.Step) throws -> Never {
        guard case .retry(let after) = step else {
            try store.transition(opIDs, .deferred)
            throw FerryKitError.unauthorized
        }
        let due = now().addingTimeInterval(after)
        try postpone(opIDs, error: response.body, until: due)
        try update { $0.nextAttempt = due }
        throw ServerRefusedForNow(status: response.status, retryAfter: after)
    }

    /// The outbox's record of a request that got no answer, in the shape of a problem.
    static func noAnswer(_ error: any Error) -> Data {
        JSONValue.object(["code": .string("transport_failure"), "detail": .string("\(error)")]).encoded()
    }
}

/// The server answered 5xx, 429, or 409 `idempotency_key_in_use`: the upload waits `retryAfter` seconds.
public struct ServerRefusedForNow: Error, Equatable, Sendable {
    public let status: Int
    public let retryAfter: Double
}
