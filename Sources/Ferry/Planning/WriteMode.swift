// `package` for ferry-fuzz, which runs FieldPrecheck in PATCH and PUT mode.
/// Which write a plan performs; decides the field rules.
package enum WriteMode: String, Sendable {
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

    /// Data columns a PATCH or PUT may change.
    var updatableColumns: [Column] { dataColumns.filter(\.updatable) }

    /// Data columns a PATCH or PUT may only echo unchanged.
    var readOnlyColumns: [Column] { dataColumns.filter { !$0.updatable } }
}

/// SQL over one write item (a jsonb object) shared by the update plans.
enum WriteItem {
    /// The item without the fields the server owns, for `jsonb_populate_record`
    /// over the current row: what the client sent, merged onto it.
    static func clientFields(_ item: String) -> String {
        "\(item) - ARRAY['id', 'revision', 'last_modified', 'is_deleted']"
    }

    /// The body `revision` as bigint, NULL when absent or not a non-negative integer.
    static func baseRevision(_ item: String) -> String {
        let revisionOK = ValueKind.integer(min: 0, max: Int64.max).check("\(item) -> 'revision'")
        return "CASE WHEN \(revisionOK) THEN (\(item) ->> 'revision')::numeric::bigint END"
    }

    /// True when any of `columns` differs between two row references (`merged`, `current`).
    static func anyChanged(_ columns: [Column], merged: (String) -> String, current: (String) -> String) -> String {
        "(" + columns.map { SQL.distinct(merged($0.name), current($0.name), type: $0.type) }.joined(separator: " OR ") + ")"
    }
}
