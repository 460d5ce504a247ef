/// SQL expressions that render a row as JSON inside PostgreSQL, so Ferry
/// passes the bytes through. Hidden `_ferry_*` columns never appear: the
/// catalog's columns already leave them out.
///
/// `ref` turns a column name into a reference, e.g. `t."title"` or
/// `(d.cur)."title"`, so the same shapes serve tables, CTEs and composites.
struct RowJSON {
    let resource: Resource

    /// `json_build_object` over every visible column, in table order.
    /// json_build_object takes at most 100 arguments; wider rows are merged
    /// from chunks (their key order is then jsonb's).
    func full(_ ref: (String) -> String) -> String {
        let pairs = resource.columns.map { "\(SQL.literal($0.name)), \(ref($0.name))" }
        if pairs.count <= 50 { return "json_build_object(\(pairs.joined(separator: ", ")))" }
        let chunks = stride(from: 0, to: pairs.count, by: 50).map {
            "jsonb_build_object(\(pairs[$0..<min($0 + 50, pairs.count)].joined(separator: ", ")))"
        }
        return "(\(chunks.joined(separator: " || ")))::json"
    }

    /// The tombstone form: `{"id", <reference columns>, "revision", "last_modified",
    /// "is_deleted": true}`. The reference columns (`set_id`, `folder_id`, ...) let a
    /// client that keeps rows per parent (a set's terms, a folder's sets) drop the
    /// row from the right list without looking the id up; they are values the
    /// reader could already read on the live row.
    func tombstone(_ ref: (String) -> String) -> String {
        let parents = resource.columns.filter { $0.references != nil && $0.name != "id" }
            .map { "\(SQL.literal($0.name)), \(ref($0.name)), " }.joined()
        return "json_build_object('id', \(ref("id")), \(parents)'revision', \(ref("revision")), "
            + "'last_modified', \(ref("last_modified")), 'is_deleted', true)"
    }

    /// The row as clients see it: the tombstone when deleted, else the full row.
    func view(_ ref: (String) -> String) -> String {
        "CASE WHEN \(ref("is_deleted")) THEN \(tombstone(ref)) ELSE \(full(ref)) END"
    }
}

/// Small SQL text helpers. Identifiers come only from the catalog and are
/// still quoted; values are always bound parameters, never spliced in.
enum SQL {
    /// A quoted identifier.
    static func id(_ name: String) -> String { SQLIdentifier.quote(name) }

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

    /// A PostgreSQL array literal of text elements, quoted; nil elements are NULL.
    ///
    /// Byte by byte: it runs per request (Index filters, If-Match and If-None-Match
    /// revisions), and Foundation's `replacingOccurrences` was far slower, even for a
    /// one-element list.
    static func arrayLiteral(_ items: [String?]) -> String {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(items.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard let item else {
                out.append(contentsOf: "NULL".utf8)
                continue
            }
            out.append(quote)
            for byte in item.utf8 {
                if byte == quote || byte == backslash { out.append(backslash) }
                out.append(byte)
            }
            out.append(quote)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
