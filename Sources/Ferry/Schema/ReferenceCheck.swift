/// Checks, set-based, that every reference a write sets points at a live row
/// the caller can see. Row Level Security applies to the lookup, so a row of
/// another user looks exactly like a missing one: 422, field named, reason
/// `not_found` — the same answer, whoever owns the id. A reference to a
/// tombstone is 422 with reason `parent_deleted`: a row created or moved under
/// a deleted parent would be an orphan that stays live (a term added offline
/// to a set another device deleted meanwhile).
struct ReferenceCheck: Sendable, Equatable {
    let resource: Resource
    /// Column name → the referenced resource's qualified table name, for
    /// references to resources only (foreign keys to Ferry's own tables are
    /// left to PostgreSQL).
    let targets: [String: String]
    /// The cache-key part: which references are checked against which tables.
    let key: String

    init(resource: Resource, targets: [String: String]) {
        self.resource = resource
        self.targets = targets
        key = targets.sorted { $0.key < $1.key }.map { "\($0.key)>\($0.value)" }.joined(separator: ",")
    }

    /// Rows `(idx, err)` for every item of the CTE `alias` whose value for a
    /// referencing column (`value(column)`) matches no visible row, where
    /// `applies(column)` holds.
    func rows(
        alias: String, idJSON: String, columns: [String], value: (String) -> String,
        applies: (String) -> String = { _ in "true" }
    ) -> String {
        let checks = columns.compactMap { name -> String? in
            guard let target = targets[name] else { return nil }
            let value = value(name)
            return """
                SELECT \(alias).idx, json_build_object('index', \(alias).idx, 'id', \(idJSON), 'status', 422,
                         'code', 'validation_failed', 'field', \(SQL.literal(name)),
                         'reason', CASE WHEN x.deleted IS NULL THEN 'not_found' ELSE 'parent_deleted' END) AS err
                  FROM \(alias) LEFT JOIN LATERAL (SELECT x."is_deleted" AS deleted FROM \(target) x WHERE x."id" = \(value)) x ON true
                 WHERE \(value) IS NOT NULL AND \(applies(name)) AND (x.deleted IS NULL OR x.deleted)
                """
        }
        return checks.isEmpty ? "SELECT NULL::int AS idx, NULL::json AS err WHERE false" : checks.joined(separator: "\nUNION ALL\n")
    }

}

extension ReferenceCheck {
    /// The checks for `resource`, given the resources of its catalog.
    init(resource: Resource, resources: [String: Resource]) {
        var targets: [String: String] = [:]
        for column in resource.columns {
            if let name = column.references, let target = resources[name], target.schema == resource.schema {
                targets[column.name] = target.qualifiedName
            }
        }
        self.init(resource: resource, targets: targets)
    }
}

extension SchemaCatalog {
    /// The reference checks of `resource`: worked out once per catalog, not
    /// per write (a resource from elsewhere is worked out on the spot).
    func references(for resource: Resource) -> ReferenceCheck {
        if let check = referenceChecks[resource.name], check.resource == resource { return check }
        return ReferenceCheck(resource: resource, resources: resources)
    }
}
