import Foundation

/// From the pending operations to the requests that upload them: pure, so the
/// coalescing and ordering rules are tested without a server.
///
/// Per row, in write order:
/// - a create and any later updates send one POST with the row as it is now;
/// - a create followed by a delete sends nothing (the server never saw the
///   row), unless the create was sent before without a settling answer: then
///   one DELETE with `If-Match: *`;
/// - updates send one PATCH of the union of the changed fields, on the base revision;
/// - a delete (after updates or not) sends one DELETE on the base revision.
///
/// Creates go parents first and deletes children first, by the references of
/// `GET /v1`, so that the server never sees a child before its parent exists or
/// a parent deleted under a child that is still to be deleted.
public enum UploadPlanner {
    /// The requests, in the order to send them. `rows` holds each row's current
    /// local state, `bases` the revision each server-known row was edited on.
    public static func plan(
        _ operations: [PendingOperation], schema: ServerSchema, rows: [RowKey: RowData], bases: [RowKey: Int64]
    ) -> [UploadRequest] {
        var byRow: [RowKey: [PendingOperation]] = [:]
        var firstSeen: [RowKey: Int64] = [:]
        for operation in operations.sorted(by: { $0.sequence < $1.sequence }) {
            let key = RowKey(resource: operation.resource, id: operation.rowID)
            byRow[key, default: []].append(operation)
            if firstSeen[key] == nil { firstSeen[key] = operation.sequence }
        }
        var requests: [UploadRequest] = []
        for (key, ops) in byRow {
            let before = requests.count
            defer {
                if requests.count > before { requests[requests.count - 1].groups = Set(ops.compactMap(\.group)) }
            }
            guard let resource = schema[key.resource] else { continue }
            let ids = ops.map(\.opID)
            let last = ops.map(\.sequence).max() ?? 0
            let created = ops.first?.kind == .create
            let deleted = ops.contains { $0.kind == .delete }
            switch (created, deleted) {
            case (true, true) where ops.first?.sent == true:
                // The create may have reached the server with its answer lost:
                // delete whatever is there. A 404 then means it never arrived.
                requests.append(
                    UploadRequest(
                        action: .delete, resource: key.resource, rowID: key.id, body: nil,
                        baseRevision: nil, opIDs: ids, lastSequence: last))
            case (true, true):
                continue
            case (true, false):
                guard let row = rows[key] else { continue }
                // Only what the app set: a column it left out gets the server's
                // default (creator_id is the caller), not a null.
                let fields = ops.reduce(into: Set<String>()) { $0.formUnion($1.fields) }.intersection(resource.writableColumns)
                var body = row.filter { fields.contains($0.key) }
                body["id"] = .string(key.id)
                requests.append(
                    UploadRequest(
                        action: .create, resource: key.resource, rowID: key.id, body: body,
                        baseRevision: nil, opIDs: ids, lastSequence: last))
            case (false, true):
                requests.append(
                    UploadRequest(
                        action: .delete, resource: key.resource, rowID: key.id, body: nil,
                        baseRevision: bases[key], opIDs: ids, lastSequence: last))
            case (false, false):
                let fields = ops.reduce(into: Set<String>()) { $0.formUnion($1.fields) }
                    .intersection(resource.writableColumns)
                guard let row = rows[key] else { continue }
                var body: RowData = [:]
                for field in fields { body[field] = row[field] ?? .null }
                requests.append(
                    UploadRequest(
                        action: .update, resource: key.resource, rowID: key.id, body: body,
                        baseRevision: bases[key], opIDs: ids, lastSequence: last))
            }
        }
        let depth = depths(schema)
        return requests.sorted { a, b in
            let (ra, rb) = (rank(a, depth), rank(b, depth))
            if ra != rb { return ra < rb }
            return (firstSeen[RowKey(resource: a.resource, id: a.rowID)] ?? 0) < (firstSeen[RowKey(resource: b.resource, id: b.rowID)] ?? 0)
        }
    }

    /// Creates by increasing depth (parents first), then updates, then deletes by
    /// decreasing depth (children first).
    static func rank(_ request: UploadRequest, _ depth: [String: Int]) -> Int {
        let d = depth[request.resource] ?? 0
        switch request.action {
        case .create: return d
        case .update: return 1_000
        case .delete: return 2_000 + (100 - d)
        }
    }

    /// Each resource's depth in the reference graph: 0 for a resource that
    /// references none, else one more than its deepest parent. Cycles stop at
    /// the resource count.
    public static func depths(_ schema: ServerSchema) -> [String: Int] {
        var depth: [String: Int] = [:]
        for resource in schema.resources { depth[resource.name] = 0 }
        for _ in 0..<schema.resources.count {
            var changed = false
            for resource in schema.resources {
                let parents = resource.parents.subtracting([resource.name]).compactMap { depth[$0] }
                let d = (parents.max() ?? -1) + 1
                if d > depth[resource.name] ?? 0 { depth[resource.name] = d; changed = true }
            }
            if !changed { break }
        }
        return depth
    }

    /// A short stable digest (two FNV-1a lanes, 128 bits) for keys derived
    /// from many op ids; FerryKit links no crypto library for this.
    static func digest(_ text: String) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x84222325_cbf29ce4
        for byte in text.utf8 {
            a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 &+ 0x9e37_79b9
        }
        return String(a, radix: 16) + String(b, radix: 16)
    }
}

/// A row's identity across resources.
public struct RowKey: Hashable, Sendable {
    public let resource: String
    public let id: String
    public init(resource: String, id: String) { (self.resource, self.id) = (resource, id) }
}
