import Foundation

/// Uploading an app's write group (``FerryStore/write(_:)``) as one
/// `POST /v1/batch`: one transaction on the server, all or nothing.
extension SyncEngine {
    /// The batch body: each request as the operation it would be alone, in
    /// the planned order (parents first), without its own key: the batch's
    /// key covers it.
    func httpRequest(batch bundle: UploadBundle) -> TransportRequest {
        let operations: [JSONValue] = bundle.requests.map { request in
            let single = httpRequest(request)
            var operation: [String: JSONValue] = ["method": .string(single.method), "path": .string(single.path)]
            let headers = single.headers.filter { $0.key != "Idempotency-Key" }
            if !headers.isEmpty { operation["headers"] = .object(headers.mapValues(JSONValue.string)) }
            if let body = single.body, let value = try? JSONValue.decode(body) { operation["body"] = value }
            return .object(operation)
        }
        var http = TransportRequest(method: "POST", path: "/v1/batch", body: JSONValue.object(["operations": .array(operations)]).encoded())
        http.headers["Idempotency-Key"] = bundle.idempotencyKey
        return http
    }

    /// Sends a group and applies the answer. True when it must be planned and
    /// sent again (a conflict on one of its rows was merged); throws when it
    /// must wait (network, 5xx, 429, 401). A refusal rejects the whole group:
    /// the server applied none of it, and the app asked for all or nothing.
    func uploadBatch(_ bundle: UploadBundle, _ round: inout SyncRound) async throws -> Bool {
        let opIDs = bundle.opIDs
        try store.transition(opIDs, .sent)
        let response: TransportResponse
        do {
            response = try await send(httpRequest(batch: bundle))
        } catch {
            try postpone(opIDs, error: Self.noAnswer(error))
            throw error
        }
        let problem = response.object
        let index = problem?["operation_index"]?.int.map { Int($0) }.flatMap { bundle.requests.indices.contains($0) ? $0 : nil }
        let step = retryStep(after: response)
        switch step {
        case .success:
            guard case .array(let results)? = problem?["results"], results.count == bundle.requests.count else {
                try store.transition(opIDs, .deferred)
                throw FerryKitError.malformedAnswer("a batch answer without one result per operation")
            }
            try store.acknowledge(zip(bundle.requests, results).map { ($0, $1.object?["body"]?.object) })
            return false
        case .retry, .refreshToken, .pause:
            try stop(opIDs, response, step)
        case .merge:
            guard let index, let current = problem?["current"]?.object else { return try rejectGroup(bundle, response, &round) }
            try store.transition(opIDs, .returned)
            try rebase(bundle.requests[index], on: current)
            return true
        case .tombstone:
            if let index { try applyTombstone(of: bundle.requests[index], response) }
            return try rejectGroup(bundle, response, &round, except: index)
        case .reject:
            return try rejectGroup(bundle, response, &round)
        }
    }

    /// Every request of the group is refused with the server's problem, and
    /// every row goes back to the server's version (but the row at `except`,
    /// already removed by its tombstone, with its own event).
    func rejectGroup(_ bundle: UploadBundle, _ response: TransportResponse, _ round: inout SyncRound, except: Int? = nil) throws -> Bool {
        // The group's own rows first, each with the server's problem; then the
        // rows made under them outside the group.
        for (index, request) in bundle.requests.enumerated() where index != except { try refuse(request, response) }
        for request in bundle.requests { try refuseDependants(of: request, &round) }
        return false
    }
}
