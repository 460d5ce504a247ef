/// Per-field merge for a PATCH with a stale body revision.
///
/// Every synced row records, per column, the revision at which it last
/// changed (`_ferry_field_revisions`, kept by the database trigger; a column
/// never changed since the insert is absent and counts as 1). A PATCH based
/// on revision `base` applies when no field it sends changed after `base`.
/// A sent field whose value equals the current value is not a conflict:
/// applying it changes nothing, so both writers' intents hold. Otherwise the
/// answer is 409 with `conflicting_fields`. PUT, DELETE and `If-Match` stay
/// strict. A base newer than the current revision always conflicts.
enum MergeRule {
    /// SQL for the text[] of conflicting fields among `columns`, given the
    /// sent item, the current row, the merged row (composites) and the base.
    static func conflictingFields(
        _ columns: [Column], item: String, current: String, merged: String, base: String
    ) -> String {
        guard !columns.isEmpty else { return "ARRAY[]::text[]" }
        let cases = columns.map { column -> String in
            let name = SQL.literal(column.name)
            let changedSince = "coalesce(((\(current)).\"_ferry_field_revisions\" ->> \(name))::bigint, 1) > \(base)"
            let differs = SQL.distinct("(\(merged)).\(SQL.id(column.name))", "(\(current)).\(SQL.id(column.name))", type: column.valueType)
            return "CASE WHEN \(item) ? \(name) AND \(changedSince) AND \(differs) THEN \(name) END"
        }
        return "array_remove(ARRAY[\(cases.joined(separator: ", "))]::text[], NULL)"
    }
}
