import Foundation

/// The download half of a sync.
extension SyncEngine {
    /// Follows the changes feed from the saved cursor: first the cheap 304 check,
    /// then page by page, each applied with its cursor in one transaction.
    /// Without a cursor, an initial sync fills the store first. A 410
    /// `cursor_expired` starts over with an initial sync, keeping every local edit.
    ///
    /// With `wait` (continuous mode), the first request is a long poll
    /// (`&wait=`): the server holds it until a commit the user may see is in
    /// the feed, or answers 304 after that many seconds. Returns the rows received.
    @discardableResult
    func pull(wait: Int? = nil) async throws -> Int {
        var received = 0
        if try store.cursor() == nil { try await initialSync() }
        var cursor = try store.cursor()
        var check = cursor != nil
        var restarts = 0
        while true {
            var path = "/v1/changes?limit=500"
            if let cursor { path += "&since=" + cursor }
            let longPoll = check && wait != nil
            if longPoll, let wait { path += "&wait=\(wait)" }
            var request = TransportRequest(method: "GET", path: path)
            if check, let cursor { request.headers["If-None-Match"] = "\"\(cursor)\"" }
            check = false
            let response = try await send(request, longPoll: longPoll)
            switch response.status {
            case 304:
                return received
            case 410 where restarts == 0:
                restarts += 1
                try store.startOver()
                try await initialSync()
                cursor = try store.cursor()
                continue
            case 410:
                // The cursor taken for the new start is already behind the purge
                // horizon: the server moved it past a transaction still running.
                // Its feed cannot be followed from here now; the next sync starts
                // over again, and no local edit is lost meanwhile.
                throw ServerRefusedForNow(status: 410, retryAfter: policy.backoff(attempt: attempts, random: random))
            case 200:
                break
            default:
                throw refusal(response, "GET /v1/changes")
            }
            guard let body = response.object, let next = body["cursor"]?.string, case .array(let entries)? = body["changes"] else {
                throw FerryKitError.malformedAnswer("a changes page without changes and cursor")
            }
            let changes: [(resource: String, data: RowData)] = entries.compactMap { entry in
                guard let resource = entry.object?["resource"]?.string, let data = entry.object?["data"]?.object else { return nil }
                return (resource, data)
            }
            let resolvers = self.resolvers
            let events: [SyncEvent]
            do {
                events = try store.applyPage(changes, cursor: next) { resolvers[$0] }
            } catch FerryKitError.unknownResource {
                // The server's schema grew since the store was made.
                try await refreshSchema()
                events = try store.applyPage(changes, cursor: next) { resolvers[$0] }
            }
            emit(events)
            try update { $0.received += changes.count }
            received += changes.count
            cursor = next
            if body["has_more"]?.bool != true { return received }
        }
    }
}
