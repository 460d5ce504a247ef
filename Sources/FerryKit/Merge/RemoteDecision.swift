import Foundation

/// What one row from the server (a feed entry, an Index row, a conflict's
/// `current`) does to the local copy, decided from values alone: the store
/// gathers what it knows of the row (``Local``), this decides, and the store
/// carries the decision out. `RemoteDecisionTests` covers it without a database.
enum RemoteDecision: Sendable, Equatable {
    /// Nothing to do: not newer than what the store has, or not a row.
    case ignore
    /// No local edits: the server's row replaces the local one, if newer.
    case apply
    /// Local edits of other fields: the merged row; the server's row becomes
    /// the base of the edits still to upload.
    case merge(RowData)
    /// Both sides changed a field: the merged row as the resolver (or the
    /// default, local wins) decided, and the conflicts, for the app.
    case conflict(RowData, [ThreeWayMerge.Conflict])
    /// Deleted here, the delete not yet sent: the row stays gone, and the
    /// server's row becomes the delete's base.
    case keep
    /// A tombstone or a revocation: the row goes.
    case remove(Removal)

    /// How a row goes.
    struct Removal: Sendable, Equatable {
        /// The user lost access (else the row was deleted).
        let revoked: Bool
        /// The problem its waiting operations are rejected with; nil when it had none.
        let problem: Data?
        /// What the app hears; nil when the store never had the row.
        let event: SyncEvent?
    }

    /// What the store knows of the row. Only the facts ``needs(_:pending:)``
    /// names are read; the others stay empty.
    struct Local: Sendable, Equatable {
        /// Operations of the row wait in the outbox.
        var pending: Bool
        /// The server version the local edits were made on.
        var base: (revision: Int64, row: RowData)?
        /// The row as the app sees it; nil when there is none.
        var row: RowData?
        /// The fields edited locally and not yet acknowledged.
        var dirty: Set<String> = []

        static func == (a: Local, b: Local) -> Bool {
            a.pending == b.pending && a.base?.revision == b.base?.revision && a.base?.row == b.base?.row && a.row == b.row && a.dirty == b.dirty
        }
    }

    /// The facts a decision reads besides ``Local/pending``.
    struct Needs: OptionSet, Sendable {
        let rawValue: Int
        static let base = Needs(rawValue: 1)
        static let row = Needs(rawValue: 2)
        static let dirty = Needs(rawValue: 4)
    }

    /// What to read before deciding on `remote`. A live row meeting no local
    /// edits needs nothing more: applying it is then one statement, which is
    /// what an initial sync does 100,000 times.
    static func needs(_ remote: RowData, pending: Bool) -> Needs {
        if remote["is_deleted"]?.bool == true { return remote["revoked"]?.bool == true ? [.row] : [.base, .row] }
        guard remote["revision"]?.int != nil, pending else { return [] }
        return [.base, .row, .dirty]
    }

    /// The rule: older or equal revisions are ignored; a tombstone or a
    /// revocation removes the row (its waiting operations become rejected,
    /// with an event that carries the local version); a row without local edits
    /// is replaced; one with local edits is merged field by field, the
    /// incoming row becoming the new base.
    static func decide(
        resource: String, id: String, remote: RowData, local: Local,
        resolver: ThreeWayMerge.Resolver? = nil
    ) -> RemoteDecision {
        if remote["is_deleted"]?.bool == true {
            let revoked = remote["revoked"]?.bool == true
            if !revoked, let base = local.base, let revision = remote["revision"]?.int, revision <= base.revision { return .ignore }
            let problem =
                local.pending
                ? JSONValue.object([
                    "code": .string(revoked ? "revoked" : "gone"),
                    "detail": .string(revoked ? "access to the row was lost" : "the row was deleted"),
                ]).encoded() : nil
            let existed = local.row != nil || local.pending
            let event: SyncEvent? =
                existed
                ? .removed(
                    resource: resource, id: id, revoked: revoked, discardedEdits: local.pending,
                    localVersion: local.pending ? local.row : nil) : nil
            return .remove(Removal(revoked: revoked, problem: problem, event: event))
        }
        guard let revision = remote["revision"]?.int else { return .ignore }
        guard local.pending else { return .apply }
        if let base = local.base, base.revision >= revision { return .ignore }
        guard let row = local.row else { return .keep }
        let (merged, conflicts) = ThreeWayMerge.merge(base: local.base?.row, local: row, remote: remote, dirty: local.dirty, resolve: resolver)
        return conflicts.isEmpty ? .merge(merged) : .conflict(merged, conflicts)
    }
}
