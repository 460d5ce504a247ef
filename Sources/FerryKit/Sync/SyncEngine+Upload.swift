import Foundation

/// The upload half of a sync.
extension SyncEngine {
    /// Sends the outbox until it is empty or an answer says to stop. A request
    /// that must be merged and sent again (409, 412) is planned afresh, at most a
    /// few rounds per sync so that a row edited on two devices in a tight loop
    /// cannot hold the sync forever.
    func push() async throws {
        for _ in 0..<5 {
            guard let schema = try store.schema() else { return }
            let input = try store.uploadInput()
            let requests = UploadPlanner.plan(input.operations, schema: schema, rows: input.rows, bases: input.bases)
            try store.discardCancelled(input.operations, planned: requests)
            try update { _ in }
            guard !requests.isEmpty else { return }
            var again = false
            for request in requests {
                if try await upload(request) { again = true }
            }
            if !again { return }
        }
    }

    /// The HTTP request for an upload.
    func httpRequest(_ request: UploadRequest) -> TransportRequest {
        let path = "/v1/\(request.resource)"
        let rowPath = path + "/" + (request.rowID.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", "_"])) ?? request.rowID)
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
    func upload(_ request: UploadRequest) async throws -> Bool {
        try store.setState(request.opIDs, "inflight")
        let response: TransportResponse
        do {
            response = try await send(httpRequest(request))
        } catch {
            try store.setState(request.opIDs, "pending")
            throw error
        }
        let retryAfter = RetryPolicy.retryAfter(response.headers["retry-after"], now: Date())
        switch policy.step(after: .status(response.status, retryAfter: retryAfter), attempt: attempts, random: random) {
        case .success:
            try store.acknowledge(request, serverRow: (try? JSONValue.decode(response.body))?.object)
            return false
        case .merge:
            guard let current = response.object?["current"]?.object else { return try reject(request, response) }
            try store.setState(request.opIDs, "pending")
            if request.action == .create { try store.createBecameUpdate(request) }
            emit(try store.applyRemote(request.resource, current, resolver: resolvers[request.resource]))
            return true
        case .tombstone:
            // The tombstone first: it marks every pending edit of the row rejected
            // and says so in its event; then these operations carry the answer.
            let tombstone = response.object?["current"]?.object ?? ["id": .string(request.rowID), "is_deleted": .bool(true)]
            emit(try store.applyRemote(request.resource, tombstone, resolver: nil))
            try store.setState(request.opIDs, "rejected", error: response.body)
            return false
        case .reject:
            return try reject(request, response)
        case .retry(let after):
            let due = Date().addingTimeInterval(after)
            try store.setState(request.opIDs, "pending", nextAttempt: due)
            try update { $0.nextAttempt = due }
            throw ServerRefusedForNow(status: response.status, retryAfter: after)
        case .refreshToken, .pause:
            try store.setState(request.opIDs, "pending")
            throw FerryKitError.unauthorized
        }
    }

    func reject(_ request: UploadRequest, _ response: TransportResponse) throws -> Bool {
        try store.setState(request.opIDs, "rejected", error: response.body)
        try store.rollBack(request)
        emit([.rejected(resource: request.resource, id: request.rowID, status: response.status, problem: response.body)])
        return false
    }
}

/// The server answered 5xx or 429: the upload waits `retryAfter` seconds.
public struct ServerRefusedForNow: Error, Equatable, Sendable {
    public let status: Int
    public let retryAfter: Double
}
