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
