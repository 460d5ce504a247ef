/// Field by field merge of the server's version of a row into a locally edited one.
///
/// `base` is the version the local edits were made on, `local` the row as the
/// app sees it, `remote` the server's newer version, and `dirty` the fields
/// edited locally and not yet acknowledged. A field only one side changed takes
/// that side's value. A field both changed to different values is a conflict;
/// by default the local value wins (it is still to be uploaded, and the server
/// merges per field too), and the conflict is reported.
public enum ThreeWayMerge {
    /// One field both sides changed.
    public struct Conflict: Sendable, Equatable {
        public let field: String
        public let base: JSONValue?
        public let local: JSONValue?
        public let remote: JSONValue?

        public init(field: String, base: JSONValue?, local: JSONValue?, remote: JSONValue?) {
            (self.field, self.base, self.local, self.remote) = (field, base, local, remote)
        }
    }

    /// Decides one conflict; the default keeps the local value.
    public typealias Resolver = @Sendable (Conflict) -> JSONValue?

    /// The merged row, and the conflicts it resolved.
    public static func merge(
        base: RowData?, local: RowData, remote: RowData, dirty: Set<String>, resolve: Resolver? = nil
    ) -> (row: RowData, conflicts: [Conflict]) {
        var merged = remote
        var conflicts: [Conflict] = []
        for field in dirty {
            let mine = local[field], theirs = remote[field], was = base?[field]
            if theirs == was || theirs == mine {
                merged[field] = mine
            } else {
                let conflict = Conflict(field: field, base: was, local: mine, remote: theirs)
                conflicts.append(conflict)
                merged[field] = resolve.map { $0(conflict) } ?? mine
            }
        }
        return (merged, conflicts.sorted { $0.field < $1.field })
    }
}
