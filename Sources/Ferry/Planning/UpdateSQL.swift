/// The update and delete statement: PATCH, PUT, bulk PATCH, DELETE and
/// bulk DELETE, one UPDATE for every item.
///
/// Parameters: ``WriteParameters``: the JSON array of items; the path id of a
/// single write (NULL in bulk, where each item names its `id`); the revisions
/// `If-Match` lists (NULL without `If-Match`); true for `If-Match: *`.
///
/// Shape:
/// ```
/// i, k  items, their id (NULL when malformed) and body revision ("base")
/// fe    field errors (FieldValidation), PATCH and PUT only
/// c     the current rows, locked (FOR UPDATE), merged with the item
/// d     per item: conflicting fields (per-field merge), read-only changes
/// st    per item status, in RFC 9110 §13.2.2 order: 404 (403 for a row the caller
///       reads but may not write: a member's own member row), 410 (delete: 200),
///       412, 400 revision_required, 422, 409
/// u     the UPDATE, only when every item is 200
/// o     outcome; a row RLS refused to update is 404
/// ```
/// Output: `(status, body, revision, last_modified, id)`; any failure calls
/// `ferry.fail` with every failing item.
struct UpdateSQL {
    let resource: Resource
    let mode: WriteMode
    let references: ReferenceCheck
    /// Whether the items hold exactly one (see ``SQL/itemRows(_:oneItem:)``).
    var oneItem = false

    private var updatable: [Column] { resource.updatableColumns }
    private var readOnly: [Column] { resource.readOnlyColumns }

    var sql: String {
        let parameters = WriteParameters.placeholders
        let (pathID, revisions, anyRevision) = (parameters.pathID, parameters.revisions, parameters.anyRevision)
        let table = resource.qualifiedName
        let rows = RowJSON(resource: resource)
        let isDelete = mode == .delete
        let idKind = resource.idKind
        let fe =
            isDelete
            ? "fe AS (SELECT NULL::int AS idx, NULL::json AS err WHERE false)"
            : FieldValidation(resource: resource, mode: mode).cte
        let merged =
            isDelete
            ? "t"
            : """
            jsonb_populate_record(t, CASE WHEN EXISTS (SELECT 1 FROM fe WHERE fe.idx = k.idx) OR jsonb_typeof(k.item) <> 'object'
                                          THEN '{}'::jsonb ELSE \(SQL.WriteItem.clientFields("k.item")) END)
            """
        let referenceRows = references.rows(
            alias: "d", idJSON: "to_jsonb(d.raw_id)", columns: isDelete ? [] : updatable.map(\.name),
            value: SQL.field("d.m"),
            applies: { "d.found AND d.item ? \(SQL.literal($0)) AND (d.m).\(SQL.id($0)) IS DISTINCT FROM (d.cur).\(SQL.id($0))" })
        let strict = mode == .patch ? "false" : "true"
        let view = isDelete ? rows.tombstone : rows.full
        return """
            WITH \(SQL.itemRows(parameters.items, oneItem: oneItem)),
            k AS (
              SELECT x.*, \(idKind.safeCast("x.raw_id", type: resource.idType)) AS id,
                     count(*) OVER (PARTITION BY lower(x.raw_id)) AS dups
                FROM (SELECT i.idx, i.item,
                             coalesce(\(pathID)::text, CASE WHEN jsonb_typeof(i.item) = 'object' THEN i.item ->> 'id' END) AS raw_id,
                             CASE WHEN jsonb_typeof(i.item) = 'object' THEN \(SQL.WriteItem.baseRevision("i.item")) END AS base
                        FROM i) x
            ),
            \(fe),
            c AS (
              SELECT k.idx, t AS cur, \(merged) AS m
                FROM k JOIN \(table) t ON t."id" = k.id
                 FOR UPDATE OF t
            ),
            d AS (
              SELECT k.idx, k.raw_id, k.id, k.item, k.base, k.dups, c.cur, c.m, c.idx IS NOT NULL AS found,
                     \(conflicts) AS conflicts, \(readOnlyChanges) AS ro, \(changed) AS changed
                FROM k LEFT JOIN c ON c.idx = k.idx
            ),
            fk AS (\(referenceRows)),
            bad AS (SELECT idx, err FROM fe UNION ALL SELECT idx, err FROM fk),
            st AS (
              SELECT d.*, CASE
                       WHEN d.raw_id IS NULL OR d.dups > 1 THEN 422
                       WHEN NOT d.found THEN CASE WHEN EXISTS (SELECT 1 FROM \(table) r WHERE r."id" = d.id) THEN 403 ELSE 404 END
                       WHEN (d.cur)."is_deleted" THEN \(isDelete ? "200" : "410")
                       WHEN \(revisions)::bigint[] IS NOT NULL AND NOT ((d.cur)."revision" = ANY (\(revisions)::bigint[])) THEN 412
                       WHEN d.base IS NULL AND \(revisions)::bigint[] IS NULL AND NOT coalesce(\(anyRevision)::boolean, false) THEN 400
                       WHEN EXISTS (SELECT 1 FROM bad WHERE bad.idx = d.idx) OR cardinality(d.ro) > 0 THEN 422
                       WHEN d.base IS NULL OR d.base = (d.cur)."revision" THEN 200
                       WHEN \(strict) OR d.base > (d.cur)."revision" OR cardinality(d.conflicts) > 0 THEN 409
                       ELSE 200 END AS status,
                     \(needsWrite) AS needs_write
                FROM d
            ),
            u AS (\(updateStatement(table: table))),
            o AS (
              SELECT st.idx, st.raw_id,
                     CASE WHEN st.status = 200 AND st.needs_write AND u."id" IS NULL
                               AND NOT EXISTS (SELECT 1 FROM st s2 WHERE s2.status <> 200) THEN 404
                          ELSE st.status END AS status,
                     CASE WHEN u."id" IS NOT NULL THEN \(view(SQL.column("u"))) ELSE \(view(SQL.field("st.cur"))) END AS row,
                     coalesce(u."revision", (st.cur)."revision") AS revision,
                     coalesce(u."last_modified", (st.cur)."last_modified") AS last_modified
                FROM st LEFT JOIN u ON u."id" = st.id
            ),
            errs AS (
              SELECT o.idx, 0 AS n, jsonb_build_object('index', o.idx, 'id', to_jsonb(o.raw_id), 'status', o.status,
                       'code', CASE o.status WHEN 404 THEN 'not_found' WHEN 403 THEN 'forbidden' WHEN 410 THEN 'gone'
                                    WHEN 412 THEN 'precondition_failed' WHEN 400 THEN 'revision_required'
                                    WHEN 409 THEN 'revision_conflict' ELSE 'validation_failed' END)
                     || CASE WHEN o.status IN (409, 410, 412) THEN jsonb_build_object('current', \(rows.view(SQL.field("st.cur"))))
                             ELSE '{}'::jsonb END
                     || CASE WHEN o.status = 409 AND \(mode == .patch) THEN jsonb_build_object('conflicting_fields', to_jsonb(st.conflicts))
                             ELSE '{}'::jsonb END
                     || CASE WHEN o.status = 422 THEN jsonb_build_object('field', 'id',
                               'reason', CASE WHEN st.raw_id IS NULL THEN 'required' ELSE 'duplicate' END)
                             ELSE '{}'::jsonb END AS err
                FROM o JOIN st ON st.idx = o.idx
               WHERE o.status <> 200
                 AND NOT (o.status = 422 AND st.id IS NOT NULL AND st.dups = 1)
              UNION ALL
              SELECT bad.idx, 1, bad.err::jsonb FROM bad JOIN st ON st.idx = bad.idx
               WHERE st.status = 422 AND st.id IS NOT NULL AND st.dups = 1
              UNION ALL
              SELECT st.idx, 2, jsonb_build_object('index', st.idx, 'id', to_jsonb(st.raw_id), 'status', 422,
                       'code', 'validation_failed', 'field', f.name, 'reason', 'read_only')
                FROM st CROSS JOIN unnest(st.ro) AS f(name)
               WHERE st.status = 422 AND st.id IS NOT NULL AND st.dups = 1
            )
            SELECT 200 AS status,
                   CASE WHEN EXISTS (SELECT 1 FROM o WHERE o.status <> 200)
                        THEN ferry.fail(json_build_object('errors', (SELECT json_agg(errs.err ORDER BY errs.idx, errs.n) FROM errs)))::text
                        ELSE coalesce((SELECT json_agg(o.row ORDER BY o.idx) FROM o), '[]')::text END AS body,
                   (SELECT max(o.revision) FROM o) AS revision, (SELECT max(o.last_modified) FROM o) AS last_modified,
                   (SELECT min(o.raw_id) FROM o) AS id
            """
    }

    /// Sent fields that changed after the base revision (see MergeRule).
    private var conflicts: String {
        guard mode == .patch else { return "ARRAY[]::text[]" }
        return MergeRule.conflictingFields(updatable, item: "k.item", current: "c.cur", merged: "c.m", base: "k.base")
    }

    /// Sent fields the caller may not change, with a value other than the current one.
    private var readOnlyChanges: String {
        guard mode != .delete, !readOnly.isEmpty else { return "ARRAY[]::text[]" }
        let cases = readOnly.map { column -> String in
            let name = SQL.literal(column.name)
            return "CASE WHEN k.item ? \(name) AND "
                + SQL.distinct("(c.m).\(SQL.id(column.name))", "(c.cur).\(SQL.id(column.name))", type: column.valueType)
                + " THEN \(name) END"
        }
        return "array_remove(ARRAY[\(cases.joined(separator: ", "))]::text[], NULL)"
    }

    /// Whether a PATCH changes any updatable field.
    private var changed: String {
        guard mode == .patch, !updatable.isEmpty else { return "false" }
        return SQL.WriteItem.anyChanged(updatable, merged: SQL.field("c.m"), current: SQL.field("c.cur"))
    }

    private var needsWrite: String {
        switch mode {
        case .patch: return "d.changed"
        case .put: return updatable.isEmpty ? "false" : "true"
        case .delete: return "NOT coalesce((d.cur).\"is_deleted\", true)"
        case .create: return "false"
        }
    }

    private func updateStatement(table: String) -> String {
        let sets: [String]
        switch mode {
        case .patch: sets = updatable.map { "\(SQL.id($0.name)) = (st.m).\(SQL.id($0.name))" }
        case .put:
            sets = updatable.map {
                "\(SQL.id($0.name)) = CASE WHEN st.item ? \(SQL.literal($0.name)) THEN (st.m).\(SQL.id($0.name)) "
                    + "ELSE \($0.defaultSQL ?? "NULL") END"
            }
        case .delete: sets = ["\"is_deleted\" = true"]
        case .create: sets = []
        }
        guard !sets.isEmpty else { return "SELECT t.* FROM \(table) t WHERE false" }
        return """
            UPDATE \(table) AS t SET \(sets.joined(separator: ", "))
              FROM st
             WHERE t."id" = st.id AND st.status = 200 AND st.needs_write
               AND NOT EXISTS (SELECT 1 FROM st s2 WHERE s2.status <> 200)
            RETURNING t.*
            """
    }
}
