import Foundation

/// The requests of one HTTP call: one request alone, or many of the same
/// action on one resource sent as Ferry's bulk call (`POST`, `PATCH` or
/// `DELETE /v1/<r>` with an array), which applies all of them or none.
public struct UploadBundle: Sendable, Equatable {
    public let requests: [UploadRequest]

    public init(_ requests: [UploadRequest]) { self.requests = requests }

    /// More than one request: it goes as a bulk call.
    public var isBulk: Bool { requests.count > 1 }

    /// Every operation this call acknowledges.
    public var opIDs: [UUID] { requests.flatMap(\.opIDs) }

    /// The single request's key, or a digest of every operation: the same
    /// bundle planned again after a lost answer carries the same key.
    public var idempotencyKey: String {
        if requests.count == 1 { return requests[0].idempotencyKey }
        return "ops-" + UploadPlanner.digest(opIDs.map { $0.uuidString.lowercased() }.sorted().joined(separator: ","))
    }
}

extension UploadPlanner {
    /// Groups planned requests (in their sending order) into calls: requests
    /// of the same action on the same resource at the same step of the order
    /// go together, up to `maxBulk` per call. Requests of rows in `solo`, and
    /// updates and deletes without a base revision (they need `If-Match: *`,
    /// which a bulk item cannot carry), go alone.
    ///
    /// Calls keep the order's guarantees: every call of a step goes after the
    /// calls of the steps before it, so parents still precede children.
    public static func bundle(_ requests: [UploadRequest], schema: ServerSchema, maxBulk: Int = 100,
                              solo: Set<RowKey> = []) -> [UploadBundle] {
        let depth = depths(schema)
        struct Step: Hashable { let rank: Int; let resource: String; let action: UploadRequest.Action }
        var order: [Step] = []
        var grouped: [Step: [UploadRequest]] = [:]
        var bundles: [UploadBundle] = []
        func flush() {
            for step in order {
                let items = grouped[step] ?? []
                var start = 0
                while start < items.count {
                    let end = min(start + max(1, maxBulk), items.count)
                    bundles.append(UploadBundle(Array(items[start..<end])))
                    start = end
                }
            }
            order.removeAll()
            grouped.removeAll()
        }
        var currentRank: Int?
        for request in requests {
            let rank = rank(request, depth)
            if rank != currentRank { flush(); currentRank = rank }
            let alone = solo.contains(RowKey(resource: request.resource, id: request.rowID))
                || (request.action != .create && request.baseRevision == nil)
            if alone {
                bundles.append(UploadBundle([request]))
                continue
            }
            let step = Step(rank: rank, resource: request.resource, action: request.action)
            if grouped[step] == nil { order.append(step) }
            grouped[step, default: []].append(request)
        }
        flush()
        return bundles
    }
}
