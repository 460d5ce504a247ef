/// SQL that renders a synced row as the JSON clients get from the REST
/// actions: every visible column for a live row, the short tombstone form
/// `{"id", "revision", "last_modified", "is_deleted": true}` for a deleted one.
enum RowJSON {
    /// `json_build_object` takes at most 100 arguments, i.e. 50 columns.
    private static let maxBuildObjectColumns = 50

    /// The expression for the row aliased `alias` of `resource`.
    static func expression(_ resource: Resource, alias: String) -> String {
        let a = alias
        let tombstone = "json_build_object('id', \(a).id, 'revision', \(a).revision, "
            + "'last_modified', \(a).last_modified, 'is_deleted', true)"
        let live: String
        if resource.columns.count <= maxBuildObjectColumns {
            live = "json_build_object(" + resource.columns.map {
                "\(SQLLiteral.quote($0.name)), \(a).\(SQLIdentifier.quote($0.name))"
            }.joined(separator: ", ") + ")"
        } else {
            live = "(SELECT row_to_json(j) FROM (SELECT "
                + resource.columns.map { "\(a).\(SQLIdentifier.quote($0.name))" }.joined(separator: ", ") + ") j)"
        }
        return "CASE WHEN \(a).is_deleted THEN \(tombstone) ELSE \(live) END"
    }
}

/// Quoting of SQL string literals (standard_conforming_strings is on by
/// default since PostgreSQL 9.1). Used only for names from the catalog.
enum SQLLiteral {
    /// `'text'` with embedded quotes doubled.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
