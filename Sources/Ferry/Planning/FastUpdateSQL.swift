/// The common single-row PATCH, PUT or DELETE as one plain UPDATE: valid
/// fields, a visible live row, the precondition met, the body (or
/// `?revision=`) revision absent or current, and (PATCH) something to change.
///
/// Same parameters as ``UpdateSQL`` (``WriteParameters``: the one-item array,
/// the path id, the `If-Match` revisions, `If-Match: *`) and the same output
/// row. It returns no row whenever UpdateSQL could answer anything but "200,
/// written": invalid or (PUT) missing required fields, no such row,
/// tombstone (DELETE: 200 without a write), 412, 400, 422, a stale base
/// (PATCH: per-field merge or 409; PUT and DELETE: 409), a PATCH that changes
/// nothing, or a reference sent. The caller then runs UpdateSQL, which finds
/// the answer as before; nothing was written, because a one-row UPDATE either
/// writes or does not.
///
/// Why: UpdateSQL's CTE chain, built to report every failure of a bulk
/// write, is mostly executor start-up for one row. Replayed under pgbench
/// with real writes, this statement ran markedly more PATCHes per second than
/// UpdateSQL on the same rows, and PATCH and PUT through Ferry gained about as
/// much (see bench/api/README.md).
///
/// The new row is computed from `t` inside the UPDATE, never from a separate
/// scan: under READ COMMITTED a concurrent update makes PostgreSQL re-check
/// the WHERE clause and the SET list against the newest row version, so
/// fields a PATCH does not send keep their newest values, and a base
/// revision that went stale while waiting for the lock no longer matches.
struct FastUpdateSQL {
    let resource: Resource
    /// `.patch`, `.put` or `.delete`.
    let mode: WriteMode
    let references: ReferenceCheck
    /// The body's fields already passed ``FieldPrecheck``: the statement leaves
    /// FieldValidation's per-field check out, and the item's JSON type (an object,
    /// as ObjectMembers read it) unchecked.
    var prechecked = false
    /// The base revision comes as a bind (``WriteParameters/baseRevision``,
    /// ``BaseRevision``), not read from the item in SQL.
    var baseBound = false

    private var updatable: [Column] { resource.updatableColumns }
    private var readOnly: [Column] { resource.readOnlyColumns }
    private var parameters: WriteParameters { .placeholders }

    /// Whether the write can change anything at all (else UpdateSQL answers).
    var applies: Bool {
        switch mode {
        case .patch, .put: !updatable.isEmpty
        case .delete: true
        case .create: false
        }
    }

    var sql: String { mode == .delete ? deleteSQL : writeSQL }

    /// The precondition: `If-Match` met, and a body revision (or, without
    /// one, `If-Match` of any kind) that is the row's current one.
    private var preconditionMet: [String] {
        let base = baseBound ? "\(WriteParameters.baseRevision)::bigint" : SQL.WriteItem.baseRevision("i.item")
        let (revisions, anyRevision) = (parameters.revisions, parameters.anyRevision)
        return [
            "(\(revisions)::bigint[] IS NULL OR t.\"revision\" = ANY (\(revisions)::bigint[]))",
            "((\(base)) IS NULL AND (\(revisions)::bigint[] IS NOT NULL OR coalesce(\(anyRevision)::boolean, false)) OR (\(base)) = t.\"revision\")",
        ]
    }

    /// A plain cast: every path id reaching this statement passed
    /// ``ValueKind/accepts(id:)`` (ResourceAction refuses the others first), a subset
    /// of what the cast takes; ``ValueKind/safeCast(_:type:)``'s pattern match would
    /// only be set up and run again in every statement.
    private var pathRow: String { "t.\"id\" = (\(parameters.pathID)::text)::\(resource.idType)" }

    /// A soft delete of a live row; a tombstone is UpdateSQL's (200, no write).
    private var deleteSQL: String {
        let conditions = [pathRow, "NOT t.\"is_deleted\""] + preconditionMet
        let deleted = resource.rowHints.map { "(SELECT true WHERE \($0.madeHere("t")))" } ?? "true"
        return """
            WITH \(SQL.itemRows(parameters.items, oneItem: true))
            UPDATE \(resource.qualifiedName) AS t SET "is_deleted" = \(deleted)
              FROM i
             WHERE \(conditions.joined(separator: "\n   AND "))
            RETURNING 200 AS status, json_build_array(\(RowJSON(resource: resource).tombstone(SQL.column("t"))))::text AS body,
                      t."revision", t."last_modified", \(parameters.pathID)::text AS id\(hinted)
            """
    }

    private var writeSQL: String {
        let merged = "jsonb_populate_record(t, \(SQL.WriteItem.clientFields("i.item")))"
        let names = updatable.map { SQL.id($0.name) }
        // PUT resets what it leaves out to the column default, as UpdateSQL does.
        let values =
            mode == .put
            ? updatable.map { "CASE WHEN i.item ? \(SQL.literal($0.name)) THEN m.\(SQL.id($0.name)) ELSE \($0.defaultSQL ?? "NULL") END" }
            : names.map { "m.\($0)" }
        // The row's update trigger leaves its hints to Ferry when the SET list marks it (``RowHints``).
        let made = resource.rowHints.map { " WHERE \($0.madeHere("t"))" } ?? ""
        let set =
            names.count == 1
            ? "\(names[0]) = (SELECT \(values[0]) FROM \(merged) m\(made))"
            : "(\(names.joined(separator: ", "))) = (SELECT \(values.joined(separator: ", ")) FROM \(merged) m\(made))"
        let readOnlyUnchanged = readOnly.map {
            "NOT (i.item ? \(SQL.literal($0.name)) AND " + SQL.WriteItem.anyChanged([$0], merged: SQL.column("m"), current: SQL.column("t")) + ")"
        }
        // A PATCH that changes nothing writes nothing; a PUT always writes.
        let changed = mode == .patch ? [SQL.WriteItem.anyChanged(updatable, merged: SQL.column("m"), current: SQL.column("t"))] : []
        let rowChecks = changed + readOnlyUnchanged
        let validation = FieldValidation(resource: resource, mode: mode)
        let required = validation.required
        // A sent updatable reference needs ReferenceCheck's per-field 422: leave
        // it to UpdateSQL. A read-only one (echoed in a PUT body, say) is only
        // compared, as UpdateSQL does, by the read-only check below.
        let referenced = updatable.map(\.name).filter { references.targets[$0] != nil }
        var conditions = [pathRow]
        if !prechecked { conditions += ["jsonb_typeof(i.item) = 'object'", "NOT \(validation.anyFieldFails(item: "i.item"))"] }
        if !required.isEmpty {
            conditions.append("i.item ?& ARRAY[\(required.map(SQL.literal).joined(separator: ", "))]::text[]")
        }
        conditions += ["NOT t.\"is_deleted\""] + preconditionMet
        if !referenced.isEmpty {
            conditions.append("NOT (i.item ?| ARRAY[\(referenced.map(SQL.literal).joined(separator: ", "))]::text[])")
        }
        if !rowChecks.isEmpty {
            conditions.append("EXISTS (SELECT 1 FROM \(merged) m WHERE \(rowChecks.joined(separator: " AND ")))")
        }
        let rows = RowJSON(resource: resource)
        return """
            WITH \(SQL.itemRows(parameters.items, oneItem: true))
            UPDATE \(resource.qualifiedName) AS t SET \(set)
              FROM i
             WHERE \(conditions.joined(separator: "\n   AND "))
            RETURNING 200 AS status, json_build_array(\(rows.view(SQL.column("t"))))::text AS body, t."revision", t."last_modified",
                      \(parameters.pathID)::text AS id\(hinted)
            """
    }

    /// What the written row's live hints are made of (``RowHints``): the row's
    /// stamp, writer and scope keys. The gateway makes the hints from them after
    /// the statement; the SET list told the row's update trigger not to (issue 47 item 4).
    private var hinted: String {
        resource.rowHints.map { ", " + $0.returning("t") } ?? ""
    }
}
