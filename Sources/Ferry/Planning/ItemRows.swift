/// The `i` CTE every write plan starts from: the items of `$1`, a JSON array,
/// with their index.
///
/// A request of exactly one item gets a statement of its own whose `i` is a
/// row the planner knows is one row. The array form is estimated at 100 rows,
/// so the cached generic plan of a single PATCH built hash tables for every
/// join (`MultiExecHash` was a sizeable share of a PATCH's CPU; see bench/README.md).
enum ItemRows {
    /// `i AS (...)`: one row for `oneItem`, else one row per array element.
    static func cte(oneItem: Bool) -> String {
        if oneItem {
            return """
                i AS (
                  SELECT 0 AS idx, ($1::jsonb) -> 0 AS item
                )
                """
        }
        return """
            i AS (
              SELECT (e.ord - 1)::int AS idx, e.item FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(item, ord)
            )
            """
    }

    /// The plan-cache key suffix for the same choice.
    static func key(oneItem: Bool) -> String { oneItem ? "|one" : "|many" }
}
