import Foundation

// SQL text helpers shared by the plans: quoting, literals,
// the write items' CTE and the expressions over one write item.

/// Small SQL text helpers. Identifiers come only from the catalog and are
/// still quoted; values are always bound parameters, never spliced in.
enum SQL {
    /// `"name"` with embedded quotes doubled. Ferry takes identifiers only
    /// from the introspected catalog, and still quotes them so that any name is safe.
    static func id(_ name: String) -> String {
        // Bulk writes name their table per request (ferry.write_items); Foundation's
        // replacing goes through NSString even when there is nothing to replace.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A string literal for catalog names (field names in JSON keys).
    static func literal(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }

    /// `alias."column"`.
    static func column(_ alias: String) -> (String) -> String { { "\(alias).\(id($0))" } }

    /// `(composite)."column"`.
    static func field(_ composite: String) -> (String) -> String { { "(\(composite)).\(id($0))" } }

    /// `a IS DISTINCT FROM b` that also works for json (which has no equality operator).
    static func distinct(_ a: String, _ b: String, type: String) -> String {
        type == "json" ? "(\(a))::jsonb IS DISTINCT FROM (\(b))::jsonb" : "\(a) IS DISTINCT FROM \(b)"
    }
}

/// `SQL.itemRows`: the `i` CTE every write plan starts from: the items of `$1`, a JSON array,
/// with their index.
///
/// A request of exactly one item gets a statement of its own whose `i` is a
/// row the planner knows is one row. The array form is estimated at 100 rows,
/// so the cached generic plan of a single PATCH built hash tables for every
/// join (`MultiExecHash` was a sizeable share of a PATCH's CPU; see bench/api/README.md).
extension SQL {
    /// `i AS (...)`: one row for `oneItem`, else one row per array element.
    static func itemRows(oneItem: Bool) -> String {
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
            "(" + columns.map { SQL.distinct(merged($0.name), current($0.name), type: $0.type) }.joined(separator: " OR ") + ")"
        }
    }
}
