/// Which write a plan performs; decides the field rules.
enum WriteMode: String, Sendable {
    /// POST: insertable fields, defaults for the rest, create-retry rule.
    case create
    /// PATCH: the fields sent; per-field merge on a stale body revision.
    case patch
    /// PUT: every updatable field; left-out ones reset to their default; strict revision.
    case put
    /// DELETE: soft delete, tombstones.
    case delete
}

extension Resource {
    /// The id column (every synced table has one).
    var idColumn: Column? { column("id") }

    /// The id column's kind, for parsing ids in paths and bodies.
    var idKind: ValueKind { ValueKind(type: idColumn?.type ?? "uuid") }

    /// The id column's SQL type.
    var idType: String { idColumn?.type ?? "uuid" }

    /// Columns the client owns (not id, revision, last_modified, is_deleted).
    var dataColumns: [Column] { columns.filter { !Column.syncColumns.contains($0.name) } }
}
