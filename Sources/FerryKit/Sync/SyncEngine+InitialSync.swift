import Foundation

/// Filling an empty store (or one whose cursor expired) from Index paging
/// snapshots instead of the whole changes feed: the app's chosen rows first,
/// then every resource, parents first.
extension SyncEngine {
    /// Takes the feed's cursor of this moment (`since=now`) before the first
    /// Index page, downloads every step, and only then hands over to the feed
    /// at that cursor: a row changed meanwhile arrives through both and applies
    /// by revision, and nothing committed after the cursor is missed.
    ///
    /// Progress is saved with each page: an interrupted initial sync resumes at
    /// the next page of the step under way (or that step's first page, if its
    /// snapshot expired), never at the beginning.
    func initialSync() async throws {
        guard let schema = try store.schema() else { return }
        var state = try store.initialSyncState()
        if state.cursor == nil {
            let response = try await send(TransportRequest(method: "GET", path: "/v1/changes?since=now"))
            guard response.status == 200 else { throw refusal(response, "GET /v1/changes?since=now") }
            guard let cursor = response.object?["cursor"]?.string else {
                throw FerryKitError.malformedAnswer("since=now answered without a cursor")
            }
            try store.beginInitialSync(cursor: cursor)
            state = try store.initialSyncState()
        }
        let steps = DownloadStep.plan(first: initialSyncOrder, schema: schema)
        for step in steps where !state.done.contains(step.key) {
            let done = steps.filter { state.done.contains($0.key) }.count
            try update { $0.initialSync = InitialSyncProgress(step: step, stepsDone: done, steps: steps.count, received: 0, total: nil) }
            try await download(step, resumingAt: state.step == step.key ? state.next : nil)
            state.done.insert(step.key)
        }
        emit(try store.finishInitialSync())
        try update { $0.initialSync = nil }
    }

    /// Every page of one step, each applied with the step's progress in one transaction.
    func download(_ step: DownloadStep, resumingAt resume: String?) async throws {
        var first = step.path(limit: pageSize)
        var path = resume ?? first
        var restarts = 0
        var received = 0
        while true {
            let response = try await send(TransportRequest(method: "GET", path: path))
            switch response.status {
            case 200:
                break
            case 404 where response.object?["code"]?.string == "paging_token_not_found",
                410 where response.object?["code"]?.string == "paging_token_expired":
                // The snapshot is gone (its TTL passed while offline, or memcached
                // lost it): take a new one. Twice in a row means something else is wrong.
                guard restarts < 2 else { throw FerryKitError.malformedAnswer("GET \(path) answered \(response.status) twice") }
                restarts += 1
                try store.restartStep()
                path = first
                received = 0
                continue
            case 400 where path.contains(DownloadStep.privateOnly) && response.object?["detail"]?.string?.contains("public") == true:
                // A server older than public rows does not know `public=false`;
                // it has no public rows either, so its plain Index is the same.
                first = first.replacingOccurrences(of: DownloadStep.privateOnly, with: "")
                path = path.replacingOccurrences(of: DownloadStep.privateOnly, with: "")
                continue
            case 400, 403, 404:
                // The server will not list this (a filter on a column it does not
                // have, a resource this user may not list): nothing to download.
                try store.skipStep(step)
                return
            default:
                throw refusal(response, "GET \(path)")
            }
            guard let body = response.object, case .array(let entries)? = body["data"] else {
                throw FerryKitError.malformedAnswer("an Index page without data")
            }
            let paging = body["paging"]?.object
            let next = paging?["next"]?.string
            let rows = entries.compactMap { entry in entry.object.map { (resource: step.resource, data: $0) } }
            let resolvers = self.resolvers
            emit(try store.applyIndexPage(rows, step: step.key, next: next) { resolvers[$0] })
            received += rows.count
            let (count, soFar, total) = (rows.count, received, paging?["total"]?.int.map { Int($0) })
            try update { status in
                status.received += count
                status.initialSync?.received = soFar
                status.initialSync?.total = total
            }
            guard let next else { return }
            path = next
        }
    }

    /// The error for an answer that is neither data nor a refusal to list: a
    /// 5xx, 429 or 503 `paging_unavailable` waits and retries later.
    func refusal(_ response: TransportResponse, _ what: String) -> any Error {
        if case .retry(let after) = retryStep(after: response) {
            return ServerRefusedForNow(status: response.status, retryAfter: after)
        }
        return FerryKitError.malformedAnswer("\(what) answered \(response.status)")
    }
}
