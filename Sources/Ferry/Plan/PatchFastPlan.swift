/// The common single-row PATCH as one plain UPDATE: valid fields, a visible
/// live row, the precondition met, the body revision absent or current, and
/// something to change.
///
/// Same parameters as ``UpdatePlan`` (`$1` the one-item array, `$2` the path
/// id, `$3` the `If-Match` revisions, `$4` `If-Match: *`) and the same output
/// row. It returns no row whenever UpdatePlan could answer anything but "200,
/// written": invalid fields, no such row, tombstone, 412, 400, 422, a stale
/// base (per-field merge or 409), nothing changed, or a reference sent. The
/// caller then runs UpdatePlan, which finds the answer as before; nothing was
/// written, because a one-row UPDATE either writes or does not.
///
/// Why: UpdatePlan's CTE chain, built to report every failure of a bulk
/// write, is mostly executor start-up for one row. Replayed under pgbench
/// with real writes, this statement ran ~50% more PATCHes per second than
/// UpdatePlan on the same rows; through Ferry, PATCH gained ~45% (bench/README.md).
///
/// The merged row is computed from `t` inside the UPDATE, never from a
/// separate scan: under READ COMMITTED a concurrent update makes PostgreSQL
/// re-check the WHERE clause and the SET list against the newest row
/// version, so fields this PATCH does not send keep their newest values.
struct PatchFastPlan {
    let resource: Resource
    let references: ReferenceCheck

    private var updatable: [Column] { resource.updatableColumns }
    private var readOnly: [Column] { resource.readOnlyColumns }

    /// Whether a PATCH can change anything at all (else UpdatePlan answers).
    var applies: Bool { !updatable.isEmpty }

    var sql: String {
        let merged = "jsonb_populate_record(t, \(WriteItem.clientFields("i.item")))"
        let names = updatable.map { SQL.id($0.name) }
        let set = names.count == 1
            ? "\(names[0]) = (SELECT m.\(names[0]) FROM \(merged) m)"
            : "(\(names.joined(separator: ", "))) = (SELECT \(names.map { "m.\($0)" }.joined(separator: ", ")) FROM \(merged) m)"
        let changed = WriteItem.anyChanged(updatable, merged: SQL.column("m"), current: SQL.column("t"))
        let readOnlyUnchanged = readOnly.map {
            "NOT (i.item ? \(SQL.literal($0.name)) AND " + WriteItem.anyChanged([$0], merged: SQL.column("m"), current: SQL.column("t")) + ")"
        }
        // A sent reference needs ReferenceCheck's per-field 422: leave it to UpdatePlan.
        let referenced = references.targets.keys.sorted()
        let noReference = referenced.isEmpty ? [] : ["NOT (i.item ?| ARRAY[\(referenced.map(SQL.literal).joined(separator: ", "))]::text[])"]
        let base = WriteItem.baseRevision("i.item")
        let rowChecks = ([changed] + readOnlyUnchanged).joined(separator: " AND ")
        let conditions = [
            "t.\"id\" = \(resource.idKind.safeCast("$2::text", type: resource.idType))",
            "jsonb_typeof(i.item) = 'object'",
            // PATCH requires no field, so the field checks are all there is to FieldValidation here.
            "NOT \(FieldValidation(resource: resource, mode: .patch).anyFieldFails(item: "i.item"))",
            "NOT t.\"is_deleted\"",
            "($3::bigint[] IS NULL OR t.\"revision\" = ANY ($3::bigint[]))",
            "((\(base)) IS NULL AND ($3::bigint[] IS NOT NULL OR coalesce($4::boolean, false)) OR (\(base)) = t.\"revision\")",
        ] + noReference + ["EXISTS (SELECT 1 FROM \(merged) m WHERE \(rowChecks))"]
        let rows = RowJSON(resource: resource)
        return """
            WITH \(ItemRows.cte(oneItem: true))
            UPDATE \(resource.qualifiedName) AS t SET \(set)
              FROM i
             WHERE \(conditions.joined(separator: "\n   AND "))
            RETURNING 200, json_build_array(\(rows.view(SQL.column("t"))))::text, t."revision", t."last_modified", $2::text
            """
    }
}
