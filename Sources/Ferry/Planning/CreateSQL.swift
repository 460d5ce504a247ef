/// The create statement: one INSERT for every item of a POST.
///
/// Shape (over ``WriteParameters/items``, the JSON array of items):
/// ```
/// i   items with their index
/// fe  field errors (FieldValidation)
/// v   typed values per insertable column; left-out fields take the
///     column default, inlined from the catalog, so items may differ in shape
/// fk  references to rows the caller cannot see (RLS) or that do not exist
/// s   existing rows the caller can see with the same id (create retries)
/// ins INSERT ... ON CONFLICT (id) DO NOTHING, only when nothing failed
/// o   per item: 201 created, 200 identical retry, 409, 410
/// ```
/// Any failure calls `ferry.fail`, which aborts the transaction. Output:
/// `(status, body, revision, last_modified, id)`.
struct CreateSQL {
    let resource: Resource
    let references: ReferenceCheck
    /// Whether the items hold exactly one (see ``SQL/itemRows(_:oneItem:)``).
    var oneItem = false

    var sql: String {
        let table = resource.qualifiedName
        let rows = RowJSON(resource: resource)
        let insertable = resource.columns.filter { $0.insertable && ($0.name == "id" || !Column.syncColumns.contains($0.name)) }
        // `jsonb_populate_record` runs every field the item leaves out through its type's
        // input as a null, and a NOT NULL domain refuses that before the column's default
        // can apply: such columns with a default get it ahead of the item's own fields,
        // and their value is the record's (the default evaluated once). An item that
        // failed field validation is not read at all (NULL): its values are never used.
        let prefilled = Set(insertable.filter { $0.isDomain && !$0.nullable && $0.defaultSQL != nil && $0.name != "id" }.map(\.name))
        let values = insertable.map { column -> String in
            if prefilled.contains(column.name) { return "(p.r).\(SQL.id(column.name)) AS \(SQL.id(column.name))" }
            let fallback = column.defaultSQL ?? "NULL"
            return "CASE WHEN p.item ? \(SQL.literal(column.name)) THEN (p.r).\(SQL.id(column.name)) "
                + "ELSE \(fallback) END AS \(SQL.id(column.name))"
        }
        let defaults = insertable.filter { prefilled.contains($0.name) }.map {
            SQL.literal($0.name) + ", to_jsonb(" + ($0.defaultSQL ?? "NULL") + ")"
        }
        let fields = "i.item - ARRAY['revision', 'last_modified', 'is_deleted']"
        let read = defaults.isEmpty ? fields : "jsonb_build_object(\(defaults.joined(separator: ", "))) || \(fields)"
        let names = insertable.map { SQL.id($0.name) }.joined(separator: ", ")
        let vNames = insertable.map { "v.\(SQL.id($0.name))" }.joined(separator: ", ")
        let same = insertable.filter { $0.name != "id" }.map { column in
            "(NOT v.item ? \(SQL.literal(column.name)) OR NOT ("
                + SQL.distinct("v.\(SQL.id(column.name))", "t.\(SQL.id(column.name))", type: column.valueType) + "))"
        }
        let referenceRows = references.rows(
            alias: "v", idJSON: "v.item -> 'id'", columns: insertable.map(\.name), value: SQL.column("v"))
        return """
            WITH \(SQL.itemRows(WriteParameters.placeholders.items, oneItem: oneItem)),
            \(FieldValidation(resource: resource, mode: .create).cte),
            p AS (
              SELECT i.idx, i.item,
                     CASE WHEN NOT EXISTS (SELECT 1 FROM fe WHERE fe.idx = i.idx)
                          THEN jsonb_populate_record(NULL::\(table), \(read)) END AS r
                FROM i
            ),
            v AS (SELECT p.idx, p.item, \(values.joined(separator: ", ")) FROM p),
            fk AS (\(referenceRows)),
            bad AS (SELECT idx, err FROM fe UNION ALL SELECT idx, err FROM fk),
            s AS (
              SELECT v.idx, t AS cur, (\(same.isEmpty ? "true" : same.joined(separator: " AND "))) AS same
                FROM v JOIN \(table) t ON t."id" = v."id"
            ),
            ins AS (
              INSERT INTO \(table) AS t (\(names))
              SELECT \(vNames) FROM v
               WHERE NOT EXISTS (SELECT 1 FROM bad) AND NOT EXISTS (SELECT 1 FROM s WHERE s.idx = v.idx)
               ORDER BY v.idx
              ON CONFLICT ("id") DO NOTHING
              RETURNING t.*
            ),
            o AS (
              SELECT v.idx, v."id",
                     CASE WHEN ins."id" IS NOT NULL THEN 201
                          WHEN s.idx IS NULL THEN 409
                          WHEN (s.cur)."is_deleted" THEN 410
                          WHEN s.same THEN 200
                          ELSE 409 END AS status,
                     CASE WHEN ins."id" IS NOT NULL THEN \(rows.full(SQL.column("ins")))
                          WHEN s.idx IS NOT NULL THEN \(rows.view(SQL.field("s.cur"))) END AS row,
                     coalesce(ins."revision", (s.cur)."revision") AS revision,
                     coalesce(ins."last_modified", (s.cur)."last_modified") AS last_modified
                FROM v LEFT JOIN ins ON ins."id" = v."id" LEFT JOIN s ON s.idx = v.idx
            )
            SELECT (SELECT CASE WHEN bool_and(o.status = 200) THEN 200 ELSE 201 END FROM o) AS status,
                   CASE WHEN EXISTS (SELECT 1 FROM bad)
                        THEN ferry.fail(json_build_object('errors', (SELECT json_agg(bad.err ORDER BY bad.idx) FROM bad)))::text
                        WHEN EXISTS (SELECT 1 FROM o WHERE o.status NOT IN (200, 201))
                        THEN ferry.fail(json_build_object('errors', (
                               SELECT json_agg(jsonb_build_object('index', o.idx, 'id', o."id", 'status', o.status,
                                        'code', CASE o.status WHEN 410 THEN 'gone' ELSE 'already_exists' END)
                                        || CASE WHEN o.row IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('current', o.row) END
                                        ORDER BY o.idx)
                                 FROM o WHERE o.status NOT IN (200, 201))))::text
                        ELSE (SELECT json_agg(o.row ORDER BY o.idx) FROM o)::text END AS body,
                   (SELECT max(o.revision) FROM o) AS revision, (SELECT max(o.last_modified) FROM o) AS last_modified,
                   (SELECT min(o."id"::text) FROM o) AS id
            """
    }
}
