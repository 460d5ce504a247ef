import Foundation

/// One local write the server has not acknowledged yet: a row of `ferry_outbox`.
public struct PendingOperation: Sendable, Equatable {
    /// What the app did to the row.
    public enum Kind: String, Sendable, Codable {
        case create, update, delete
    }

    /// Unique per operation; the `Idempotency-Key` of a request that carries it alone.
    public let opID: UUID
    /// Order of the writes in this store.
    public let sequence: Int64
    public let resource: String
    public let rowID: String
    public let kind: Kind
    /// The fields this write changed (the per-field dirty mask), for updates.
    public let fields: Set<String>
    /// The ``FerryStore/write(_:)`` transaction it was made in: the server gets
    /// all of that transaction's writes in one `/v1/batch`, or none of them.
    public let group: String?
    /// It was sent before without an answer that settled it: the server may
    /// have applied it (a lost answer), so it cannot be taken back silently.
    public let sent: Bool

    public init(
        opID: UUID = UUID(), sequence: Int64, resource: String, rowID: String, kind: Kind, fields: Set<String> = [],
        group: String? = nil, sent: Bool = false
    ) {
        (self.opID, self.sequence, self.resource, self.rowID, self.kind, self.fields) = (opID, sequence, resource, rowID, kind, fields)
        (self.group, self.sent) = (group, sent)
    }
}
