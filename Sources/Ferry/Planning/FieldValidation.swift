/// The per-field checks of a write, as one CTE over every item, so that a
/// 422 lists every bad field of every item: unknown fields, wrong JSON
/// types, null for NOT NULL, required fields left out, read-only fields.
///
/// Input: a CTE `i(idx, item)`. Output CTE rows: `(idx, err json)`, where
/// `err` is `{index, id, status: 422, code, field, reason}`.
struct FieldValidation {
    let resource: Resource
    let mode: WriteMode

    /// A single write's path id (``WriteParameters/pathID``), which names its item.
    private static let pathID = WriteParameters.placeholders.pathID

    /// `fe AS (...)`.
    var cte: String {
        let idJSON = mode == .create ? "x.item -> 'id'" : "coalesce(to_jsonb(\(Self.pathID)::text), x.item -> 'id')"
        return """
            fe AS (
              SELECT x.idx, json_build_object('index', x.idx, 'id', \(idJSON), 'status', 422,
                       'code', CASE WHEN x.reason = 'unknown_field' THEN 'unknown_field' ELSE 'validation_failed' END,
                       'field', x.field, 'reason', x.reason) AS err
                FROM (
                  SELECT i.idx, i.item, k.key AS field, \(keyCase) AS reason
                    FROM i CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(i.item) = 'object' THEN i.item ELSE '{}' END) AS k
                  UNION ALL
                  SELECT i.idx, i.item, c.name, 'required'
                    FROM i CROSS JOIN unnest(\(requiredArray)) AS c(name)
                   WHERE jsonb_typeof(i.item) = 'object' AND NOT i.item ? c.name
                  UNION ALL
                  SELECT i.idx, i.item, NULL, 'not_an_object' FROM i WHERE jsonb_typeof(i.item) <> 'object'
                ) x
               WHERE x.reason IS NOT NULL
            )
            """
    }

    /// Fields that must be present.
    var required: [String] {
        switch mode {
        case .create:
            return resource.columns.filter {
                !$0.nullable && !$0.hasDefault && $0.insertable
                    && ($0.name == "id" || !Column.syncColumns.contains($0.name))
            }.map(\.name)
        case .put:
            return resource.dataColumns.filter { !$0.nullable && !$0.hasDefault && $0.updatable }.map(\.name)
        case .patch, .delete:
            return []
        }
    }

    private var requiredArray: String {
        "ARRAY[" + required.map(SQL.literal).joined(separator: ", ") + "]::text[]"
    }

    /// True when some field of the object `item` has a reason to fail: the
    /// per-field part of ``cte`` as one scan, for plans that only need to
    /// know whether to take the slow path.
    func anyFieldFails(item: String) -> String {
        "EXISTS (SELECT 1 FROM jsonb_each(\(item)) AS k WHERE (\(keyCase)) IS NOT NULL)"
    }

    /// `CASE k.key WHEN 'col' THEN <reason or NULL> ... ELSE 'unknown_field' END`.
    private var keyCase: String {
        var whens: [String] = []
        for column in resource.columns {
            whens.append("WHEN \(SQL.literal(column.name)) THEN \(reason(for: column))")
        }
        return "CASE k.key " + whens.joined(separator: " ") + " ELSE 'unknown_field' END"
    }

    private func reason(for column: Column) -> String {
        let isNull = "jsonb_typeof(k.value) = 'null'"
        let misfit = Self.misfit(column.kind)
        switch column.name {
        case "last_modified", "is_deleted":
            return "NULL"
        case "revision":
            if mode == .create { return "NULL" }
            return "CASE \(Self.misfit(.integer(min: 0, max: Int64.max))) END"
        case "id":
            if mode == .create {
                guard column.insertable else { return "'read_only'" }
                return "CASE WHEN \(isNull) THEN 'not_null' \(misfit) END"
            }
            // A single write names its row in the path; a bulk item needs a well-formed id.
            return "CASE WHEN \(Self.pathID)::text IS NOT NULL THEN NULL WHEN \(isNull) THEN 'required' \(misfit) END"
        default:
            let nullReason = column.nullable ? "NULL" : "'not_null'"
            let readOnly = (mode == .create && !column.insertable) ? "'read_only'" : "NULL"
            return "CASE WHEN \(isNull) THEN \(nullReason) \(misfit) ELSE \(readOnly) END"
        }
    }

    /// The CASE branches of a value that is not JSON null: another JSON kind than `kind`
    /// takes is `wrong_type`; of that kind but not fitting (a string that is no uuid, an
    /// integer out of range), `invalid_value`, as PostgreSQL's own refusals of a value are.
    private static func misfit(_ kind: ValueKind) -> String {
        let kindOK = kind.kindCheck("k.value"), fits = kind.check("k.value")
        guard kindOK != fits else { return "WHEN NOT (\(fits)) THEN 'wrong_type'" }
        return "WHEN NOT (\(kindOK)) THEN 'wrong_type' WHEN NOT (\(fits)) THEN 'invalid_value'"
    }
}
