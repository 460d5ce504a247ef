import Foundation

/// The requests of one HTTP call: one request alone; many of the same
/// action on one resource sent as Ferry's bulk call (`POST`, `PATCH` or
/// `DELETE /v1/<r>` with an array); or an app's write group sent as one
/// `POST /v1/batch`. Bulk calls and batches apply all of their requests or none.
public struct UploadBundle: Sendable, Equatable {
    public let requests: [UploadRequest]
    /// An app's write group (``FerryStore/write(_:)``): one `/v1/batch`.
    public let isBatch: Bool

    public init(_ requests: [UploadRequest], batch: Bool = false) { (self.requests, self.isBatch) = (requests, batch) }

    /// More than one request of one action and resource: it goes as a bulk call.
    public var isBulk: Bool { !isBatch && requests.count > 1 }

    /// Every operation this call acknowledges.
    public var opIDs: [UUID] { requests.flatMap(\.opIDs) }

    /// The single request's key, or a digest of every operation: the same
    /// bundle planned again after a lost answer carries the same key.
    public var idempotencyKey: String {
        if requests.count == 1 && !isBatch { return requests[0].idempotencyKey }
        return (isBatch ? "batch-" : "ops-") + UploadPlanner.digest(opIDs.map { $0.uuidString.lowercased() }.sorted().joined(separator: ","))
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
    ///
    /// Requests of one write group (joined with every group that shares a row
    /// with it) go as one batch, in the planned order, at the step of their
    /// first request: the group's creates precede children made outside it;
    /// its deletes may then precede deletes of children outside it, which meet
    /// the tombstone (a 410 that loses nothing, the child being deleted anyway).
    public static func bundle(
        _ requests: [UploadRequest], schema: ServerSchema, maxBulk: Int = 100,
        solo: Set<RowKey> = []
    ) -> [UploadBundle] {
        let depth = depths(schema)
        let batches = writeGroups(requests)
        var batched = Set<Int>()
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
        for (index, request) in requests.enumerated() {
            let rank = rank(request, depth)
            if rank != currentRank { flush(); currentRank = rank }
            if let batch = batches[index] {
                if batched.insert(batch).inserted {
                    flush()
                    bundles.append(UploadBundle(requests.indices.filter { batches[$0] == batch }.map { requests[$0] }, batch: true))
                }
                continue
            }
            let alone =
                solo.contains(RowKey(resource: request.resource, id: request.rowID))
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

    /// For each request in a write group of two or more requests, the number
    /// of its batch: groups that share a row are one batch (union-find).
    static func writeGroups(_ requests: [UploadRequest]) -> [Int: Int] {
        var parent: [String: String] = [:]
        func find(_ group: String) -> String {
            var root = group
            while let next = parent[root], next != root { root = next }
            return root
        }
        for request in requests {
            let groups = request.groups.sorted()
            guard let first = groups.first else { continue }
            if parent[first] == nil { parent[first] = first }
            for group in groups.dropFirst() {
                if parent[group] == nil { parent[group] = group }
                parent[find(group)] = find(first)
            }
        }
        var members: [String: [Int]] = [:]
        for (index, request) in requests.enumerated() {
            guard let group = request.groups.min() else { continue }
            members[find(group), default: []].append(index)
        }
        var batch: [Int: Int] = [:]
        for (number, indices) in members.values.filter({ $0.count > 1 }).sorted(by: { $0[0] < $1[0] }).enumerated() {
            for index in indices { batch[index] = number }
        }
        return batch
    }
}
