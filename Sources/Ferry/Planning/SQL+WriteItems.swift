// The SQL the write plans share: the write items' CTE and the expressions
// over one write item. The quoting helpers are SQL/SQL.swift.

/// `SQL.itemRows`: the `i` CTE every write plan starts from: the items of a
/// JSON array parameter (``WriteParameters/items``), with their index.
///
/// A request of exactly one item gets a statement of its own whose `i` is a
/// row the planner knows is one row. The array form is estimated at 100 rows,
/// so the cached generic plan of a single PATCH built hash tables for every
/// join (`MultiExecHash` was a sizeable share of a PATCH's CPU; see bench/api/README.md).
extension SQL {
    /// `i AS (...)` over the array `items`: one row for `oneItem`, else one row per element.
    static func itemRows(_ items: SQLParameter, oneItem: Bool) -> String {
        if oneItem {
            return """
                i AS (
                  SELECT 0 AS idx, (\(items)::jsonb) -> 0 AS item
                )
                """
        }
        return """
            i AS (
              SELECT (e.ord - 1)::int AS idx, e.item FROM jsonb_array_elements(\(items)::jsonb) WITH ORDINALITY AS e(item, ord)
            )
            """
    }

}

extension SQL {
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
            "(" + columns.map { SQL.distinct(merged($0.name), current($0.name), type: $0.valueType) }.joined(separator: " OR ") + ")"
        }
    }
}
