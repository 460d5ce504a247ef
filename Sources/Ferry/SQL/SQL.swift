import Foundation

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

    /// Whether the values `a` and `b` of a column of `type` differ: whether a write changes
    /// what a client reads back. A type's `=` says that only for the types whose text is
    /// their value (``exactlyEqual``), compared with it (strings byte for byte, in collation
    /// "C", whatever the column's collation). Every other type is compared as the JSON a
    /// client reads (`to_jsonb`, as the update trigger and `ferry.changed_fields` compare
    /// it): `citext`'s `=` ignores case, so a PATCH that changed only a name's case
    /// changed nothing and answered the old name; an interval's `=` calls `1 day` and
    /// `24:00:00` equal; `xml` and `point` have no `=`, `box`'s compares areas; an
    /// extension's type may have none. Numbers compare as JSON numbers (1.5 and 1.50 are
    /// one), json as jsonb.
    static func distinct(_ a: String, _ b: String, type: String) -> String {
        let element = elementType(type)
        guard exactlyEqual.contains(element) else {
            return "pg_catalog.to_jsonb(\(a)) IS DISTINCT FROM pg_catalog.to_jsonb(\(b))"
        }
        if element == "text" || element == "character varying" {
            return "(\(a)) COLLATE pg_catalog.\"C\" IS DISTINCT FROM (\(b)) COLLATE pg_catalog.\"C\""
        }
        return "\(a) IS DISTINCT FROM \(b)"
    }

    /// Built-in types (as `format_type` prints them) whose `=` holds exactly when the two
    /// values read back the same: two equal values have one text. Arrays of them too
    /// (array `=` compares dimensions, bounds and each element). The update trigger
    /// (functions/sync.sql) compares the same kinds as text, but bytea and timestamps
    /// through `to_jsonb`: the same answer either way.
    static let exactlyEqual: Set<String> = [
        "smallint", "integer", "bigint", "boolean", "uuid", "date", "text", "character varying", "bytea",
        "timestamp with time zone", "timestamp without time zone",
    ]

    /// Whether a filter on a column of `type` is refused: built-in types whose `=` cannot
    /// tell two values apart (xml, point, lseg, line and path have none, polygon's is
    /// missing, box's and circle's compare areas), and arrays of them.
    static func cannotFilter(_ type: String) -> Bool { noTellingEquality.contains(elementType(type)) }

    private static let noTellingEquality: Set<String> = ["xml", "point", "lseg", "line", "path", "polygon", "box", "circle"]

    /// `type` as `format_type` prints it, without its modifier and array brackets:
    /// `character varying` for `character varying(8)[]`.
    static func elementType(_ type: String) -> String {
        var name = ""
        var depth = 0
        for character in type {
            if character == "(" { depth += 1 } else if character == ")" { depth -= 1 } else if depth == 0 { name.append(character) }
        }
        while name.hasSuffix("[]") { name.removeLast(2) }
        return name.trimmingCharacters(in: .whitespaces)
    }
}
