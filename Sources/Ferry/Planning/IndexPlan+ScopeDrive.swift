extension IndexPlan {
    /// `column = ANY (ids of the scope rows the caller can read)`: a condition
    /// Row Level Security imposes anyway on a member declared
    /// `read_through_scope` (migration 0015), stated so that PostgreSQL walks
    /// the member's index from each readable scope row instead of testing the
    /// policy on every row of the table.
    struct ScopeDrive: Sendable, Equatable {
        let column: String
        /// The scope's table, qualified and quoted; its key is `id`.
        let scopeTable: String
    }

    /// The scopes an Index of `resource` reads through: those it is declared to
    /// be readable only through, unless the query already filters their column
    /// (which drives the scan by itself).
    static func drives(_ resource: Resource, catalog: SchemaCatalog, scopes: [AccessScope], query: IndexQuery) -> [ScopeDrive] {
        scopes.compactMap { scope in
            guard scope.readThroughScope, scope.member == resource.name, scope.scope != resource.name,
                  !query.filters.contains(where: { $0.column == scope.column }), let table = catalog[scope.scope] else { return nil }
            return ScopeDrive(column: scope.column, scopeTable: table.qualifiedName)
        }
    }
}
