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

    /// Whether the values `a` and `b` of a column of `type` differ: whether a write changes it.
    /// `IS DISTINCT FROM`, but for json (through jsonb) and the types whose `=` does not say
    /// it (``comparesAsText(_:)``), compared as their text.
    static func distinct(_ a: String, _ b: String, type: String) -> String {
        if type == "json" { return "(\(a))::jsonb IS DISTINCT FROM (\(b))::jsonb" }
        if comparesAsText(type) { return "(\(a))::text IS DISTINCT FROM (\(b))::text" }
        return "\(a) IS DISTINCT FROM \(b)"
    }

    /// Built-in types whose `=` cannot tell two values apart: xml, point, lseg, line and
    /// path have none, polygon's is missing, box's and circle's compare areas. Their values
    /// (and arrays of them) are compared as text, which every type has.
    static func comparesAsText(_ type: String) -> Bool { textCompared.contains(elementType(type)) }

    private static let textCompared: Set<String> = ["xml", "point", "lseg", "line", "path", "polygon", "box", "circle"]

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
