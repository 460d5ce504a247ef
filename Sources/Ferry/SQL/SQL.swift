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

    /// `a IS DISTINCT FROM b` that also works for json (which has no equality operator).
    static func distinct(_ a: String, _ b: String, type: String) -> String {
        type == "json" ? "(\(a))::jsonb IS DISTINCT FROM (\(b))::jsonb" : "\(a) IS DISTINCT FROM \(b)"
    }
}
