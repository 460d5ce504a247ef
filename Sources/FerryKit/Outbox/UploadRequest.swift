import Foundation

/// One request the outbox sends: the coalesced writes of one row.
public struct UploadRequest: Sendable, Equatable {
    public enum Action: String, Sendable {
        /// `POST /v1/<r>` with the row's writable fields.
        case create
        /// `PATCH /v1/<r>/<id>` with the changed fields and the base revision.
        case update
        /// `DELETE /v1/<r>/<id>?revision=<base>`.
        case delete
    }

    public let action: Action
    public let resource: String
    public let rowID: String
    /// The body of a create or an update.
    public let body: RowData?
    /// The revision the local edits were made on (updates and deletes of rows the server has).
    public let baseRevision: Int64?
    /// The operations this request acknowledges, in order.
    public let opIDs: [UUID]
    /// The highest sequence among them: later writes to the row stay pending.
    public let lastSequence: Int64
    /// The write groups of its operations: requests sharing a group, directly
    /// or through a row written in two groups, go in one `/v1/batch`.
    public var groups: Set<String> = []

    /// The op id of a single operation, or a key derived from all of them: a
    /// retry of the same request carries the same key, so the server replays it.
    public var idempotencyKey: String {
        if opIDs.count == 1 { return opIDs[0].uuidString.lowercased() }
        return "ops-" + UploadPlanner.digest(opIDs.map { $0.uuidString.lowercased() }.sorted().joined(separator: ","))
    }
}
